package testchild

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildsOnceAndRemoves: a command is built once (the same path twice),
// a failed build says what go said, and Remove leaves nothing behind.
func TestBuildsOnceAndRemoves(t *testing.T) {
	b := &Builds{Root: filepath.Join("..", "..")}
	defer b.Remove()
	first, err := b.Command("badinput")
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.Command("badinput")
	if err != nil || again != first {
		t.Errorf("second Command: %q, %v; want %q, built once", again, err, first)
	}
	info, err := os.Stat(first)
	if err != nil || info.Mode()&0o111 == 0 {
		t.Fatalf("the binary %s: %v %v", first, info, err)
	}
	if _, err := b.Command("no-such-command"); err == nil || !strings.Contains(err.Error(), "building testdata/no-such-command") ||
		!strings.Contains(err.Error(), "no-such-command") || strings.Count(err.Error(), "\n") == 0 {
		t.Errorf("a failed build: %v; want the command named and go's output", err)
	}
	b.Remove()
	if _, err := os.Stat(filepath.Dir(first)); !os.IsNotExist(err) {
		t.Errorf("after Remove the folder %s is still there: %v", filepath.Dir(first), err)
	}
}
