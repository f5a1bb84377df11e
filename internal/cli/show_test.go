package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestShowGolden renders a saved chronology (testdata/cancel.jsonl, as
// check --jsonl-dir writes it) as a text sequence diagram.
func TestShowGolden(t *testing.T) {
	t.Parallel()
	in := filepath.Join("testdata", "cancel.jsonl")
	r := runCLI(t, "", "show", in, "--mark", "34")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("code %d\n%s", r.code, r.stderr)
	}
	goldenFile(t, filepath.Join("testdata", "show.golden"), r.stdout)

	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if r2 := runCLI(t, string(data), "show", "--mark", "34", "-"); r2.stdout != r.stdout {
		t.Errorf("show - (stdin) differs from show FILE:\n%s", r2.stdout)
	}
}

func TestShowErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"seq\":1,\"kind\":\"frame\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr, or in stdout for code 0
	}{
		{"no file", []string{"show"}, ExitError, "show needs a chronology file"},
		{"two files", []string{"show", "a", "b"}, ExitError, `unexpected argument "b"`},
		{"missing", []string{"show", filepath.Join(dir, "nope.jsonl")}, ExitError, "no such file"},
		{"bad line", []string{"show", bad}, ExitError, "line 2"},
		{"empty", []string{"show", empty}, 0, "empty chronology"},
		{"help", []string{"show", "-h"}, 0, "Usage: mcpflight show"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "", tt.args...)
			out := r.stderr
			if tt.code == 0 {
				out = r.stdout
			}
			if r.code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("code %d (want %d), output lacks %q:\nstdout %s\nstderr %s", r.code, tt.code, tt.want, r.stdout, r.stderr)
			}
		})
	}
}

func goldenFile(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -run Golden -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; -update to accept):\n%s", path, diff)
	}
}
