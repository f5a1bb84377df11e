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

// TestEras: a revision is modern from 2026-07-28 on, legacy before; a
// string that is no revision's date is neither, and a text names a
// revision when a date of that form is in it.
func TestEras(t *testing.T) {
	for _, tc := range []struct {
		revision string
		modern   bool
	}{
		{V20260728, true}, {"2027-01-15", true}, {V20251125, false}, {V20241105, false},
		{"DRAFT-2026-v1", false}, {"2026-07-28 ", false}, {"", false},
	} {
		if got := Modern(tc.revision); got != tc.modern {
			t.Errorf("Modern(%q) = %v, want %v", tc.revision, got, tc.modern)
		}
	}
	for _, tc := range []struct {
		text  string
		names bool
	}{
		{"unsupported version; supported: 2026-07-28", true}, {`{"supported":["2026-07-28"]}`, true},
		{"Method not found", false}, {"version 20260728", false},
	} {
		if got := NamesRevision(tc.text); got != tc.names {
			t.Errorf("NamesRevision(%q) = %v, want %v", tc.text, got, tc.names)
		}
	}
}
