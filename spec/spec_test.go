package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLookupKnown(t *testing.T) {
	tests := []struct {
		id       string
		level    string
		versions string
	}{
		{"CAN-8", "SHOULD", "25"},
		{"PRG-4", "MUST", "25+26"},
		{"HTTP-25", "SHOULD NOT", "25"},
		{"LIF-9", "MUST", "25"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r, ok := Lookup(tt.id)
			if !ok {
				t.Fatalf("Lookup(%q) not found", tt.id)
			}
			got := [3]string{r.ID, r.Level, r.Versions}
			want := [3]string{tt.id, tt.level, tt.versions}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Lookup(%q) (-want +got):\n%s", tt.id, diff)
			}
			if r.Quote == "" || strings.HasPrefix(r.Quote, `"`) {
				t.Errorf("Quote = %q, want the sentence without its quotes", r.Quote)
			}
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	for _, id := range []string{"", "CAN-9999", "ID", "Area", "---"} {
		if _, ok := Lookup(id); ok {
			t.Errorf("Lookup(%q) found a requirement", id)
		}
	}
}

func TestAll(t *testing.T) {
	all := All()
	if len(all) <= 300 {
		t.Fatalf("All() has %d requirements, want > 300", len(all))
	}
	seen := map[string]bool{}
	for _, r := range all {
		if seen[r.ID] {
			t.Errorf("duplicate ID %s", r.ID)
		}
		seen[r.ID] = true
		if r.Level == "" || r.Versions == "" || r.Quote == "" {
			t.Errorf("%s: empty level, versions or quote: %+v", r.ID, r)
		}
	}
	all[0].ID = "changed"
	if All()[0].ID == "changed" {
		t.Error("All returns the registry's own slice")
	}
}

func TestEscapedPipe(t *testing.T) {
	r, ok := Lookup("TSX-11")
	if !ok {
		t.Fatal("TSX-11 not found")
	}
	if !strings.Contains(r.Notes, "number | null") {
		t.Errorf("Notes = %q, want the escaped pipe kept as |", r.Notes)
	}
}

func TestParse(t *testing.T) {
	md := "intro | not a table\n\n" +
		"| Key | Version |\n| --- | --- |\n| X-1 | a |\n\n" +
		"| ID | Lvl | Ver | Quote | Source | Test | Notes |\n" +
		"| --- | --- | --- | --- | --- | --- | --- |\n" +
		"| A-1 | MUST | 25 | \"Do it.\" | src | S | a \\| b |\n" +
		"| A-2 | MAY | 26 | \"Maybe.\" | src | C | |\n" +
		"| short | row |\n" +
		"text\n" +
		"| A-3 | MUST | 25 | \"after the table\" | s | S | |\n"
	got := Parse(md)
	want := []Requirement{
		{ID: "A-1", Level: "MUST", Versions: "25", Quote: "Do it.", Source: "src", Testability: "S", Notes: "a | b"},
		{ID: "A-2", Level: "MAY", Versions: "26", Quote: "Maybe.", Source: "src", Testability: "C"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

// TestEmbeddedCopyIsCurrent checks that spec/REQUIREMENTS.md is the same
// as the shared original, when the shared folder is beside the repo.
func TestEmbeddedCopyIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "spec", "REQUIREMENTS.md")
	shared, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("%s does not exist: no shared folder beside the repo to compare with", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(shared) != Markdown {
		t.Errorf("spec/REQUIREMENTS.md differs from %s: copy it again (cp %s spec/REQUIREMENTS.md)", path, path)
	}
}

func TestLinks(t *testing.T) {
	tests := []struct {
		source string
		want   []Link
	}{
		{"25/cancel §Behavior Requirements", []Link{{"25/cancel §Behavior Requirements",
			"https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation#behavior-requirements"}}},
		{"25/progress; 26/progress", []Link{
			{"25/progress", "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress"},
			{"26/progress", "https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress"}}},
		{"25/schema `PingRequest`", []Link{{"25/schema `PingRequest`",
			"https://github.com/modelcontextprotocol/modelcontextprotocol/blob/b0f60ba5/schema/2025-11-25/schema.ts"}}},
		{"ext/tasks", []Link{{"ext/tasks", "https://github.com/modelcontextprotocol/ext-tasks/tree/e434597"}}},
		{"somewhere else", []Link{{"somewhere else", ""}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Links(tt.source)); diff != "" {
			t.Errorf("Links(%q) (-want +got):\n%s", tt.source, diff)
		}
	}
	// Every source in the registry names a known page.
	for _, r := range All() {
		for _, l := range Links(r.Source) {
			if l.URL == "" {
				t.Errorf("%s: no URL for source %q", r.ID, l.Label)
			}
		}
	}
}

// TestDerivedRules checks DERIVED.md: its IDs carry a D and never collide
// with the shared registry, and each quoted sentence stands, word for
// word, in a spec page of its revision when the shared folder is there.
func TestDerivedRules(t *testing.T) {
	derived := Parse(DerivedMarkdown)
	if len(derived) == 0 {
		t.Fatal("DERIVED.md has no rows")
	}
	shared := map[string]bool{}
	for _, r := range Parse(Markdown) {
		shared[r.ID] = true
	}
	dirs := map[string]string{"25": "2025-11-25", "26": "2026-07-28"}
	for _, r := range derived {
		area, num, ok := strings.Cut(r.ID, "-")
		if !ok || area == "" || !strings.HasPrefix(num, "D") {
			t.Errorf("%s: a derived ID is AREA-Dn", r.ID)
		}
		if shared[r.ID] {
			t.Errorf("%s is in the shared registry too", r.ID)
		}
		if got, ok := Lookup(r.ID); !ok || !got.Derived {
			t.Errorf("Lookup(%s) = %+v, %v; want it found and marked derived", r.ID, got, ok)
		}
		dir, ok := dirs[r.Versions]
		if !ok {
			t.Errorf("%s: versions %q, want 25 or 26", r.ID, r.Versions)
			continue
		}
		root := filepath.Join("..", "..", "shared", "spec", dir)
		if _, err := os.Stat(root); err != nil {
			t.Skipf("%s: no shared spec pages to read the quote in", root)
		}
		found := false
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || found {
				return err
			}
			b, err := os.ReadFile(path)
			found = err == nil && strings.Contains(string(b), r.Quote)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			t.Errorf("%s: the quote %q stands in no page under %s", r.ID, r.Quote, root)
		}
	}
	for _, r := range Parse(Markdown) {
		if got, _ := Lookup(r.ID); got.Derived {
			t.Errorf("%s of the shared registry is marked derived", r.ID)
		}
	}
}
