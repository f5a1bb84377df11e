package spec

import "testing"

func TestAppliesTo(t *testing.T) {
	for _, tc := range []struct {
		versions string
		in2025   bool
		in2026   bool
	}{
		{"25", true, false},
		{"26", false, true},
		{"25+26", true, true},
		{"ext", false, true},
		{"", false, false},
	} {
		r := Requirement{Versions: tc.versions}
		if got := r.AppliesTo(V20251125); got != tc.in2025 {
			t.Errorf("%q under %s: %v, want %v", tc.versions, V20251125, got, tc.in2025)
		}
		if got := r.AppliesTo(V20260728); got != tc.in2026 {
			t.Errorf("%q under %s: %v, want %v", tc.versions, V20260728, got, tc.in2026)
		}
		if r.AppliesTo(V20250618) {
			t.Errorf("%q applies to %s, which the registry does not cover", tc.versions, V20250618)
		}
	}
}

// TestEveryRowAppliesToARevision: each row's Ver says which revisions it
// is in, so no row is out of every run.
func TestEveryRowAppliesToARevision(t *testing.T) {
	for _, r := range All() {
		if !r.AppliesTo(V20251125) && !r.AppliesTo(V20260728) {
			t.Errorf("%s: Ver %q names no revision", r.ID, r.Versions)
		}
	}
}
