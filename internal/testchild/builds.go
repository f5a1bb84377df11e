package testchild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Builds builds the main module's testdata commands (go build
// ./testdata/NAME) for one test binary: each once, into one folder that
// Remove deletes once the tests are over (from TestMain), so that a run
// leaves no binaries behind.
type Builds struct {
	// Root is the main module's folder, from the test's own.
	Root string

	mu    sync.Mutex
	dir   string
	built map[string]*build
}

type build struct {
	once sync.Once
	bin  string
	err  error
}

// Command returns the path of testdata/NAME's binary, built on first use;
// the error of a failed build holds the go command's output.
func (b *Builds) Command(name string) (string, error) {
	b.mu.Lock()
	if b.built == nil {
		b.built = map[string]*build{}
	}
	c, ok := b.built[name]
	if !ok {
		c = &build{}
		b.built[name] = c
	}
	b.mu.Unlock()
	c.once.Do(func() { c.bin, c.err = b.build(name) })
	return c.bin, c.err
}

func (b *Builds) build(name string) (string, error) {
	b.mu.Lock()
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "mcpflight-testdata-")
		if err != nil {
			b.mu.Unlock()
			return "", err
		}
		b.dir = dir
	}
	bin := filepath.Join(b.dir, name)
	b.mu.Unlock()
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "./testdata/"+name)
	cmd.Dir = b.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building testdata/%s: %v\n%s", name, err, out)
	}
	return bin, nil
}

// Remove deletes every binary built.
func (b *Builds) Remove() {
	b.mu.Lock()
	dir := b.dir
	b.mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// Run runs the tests of m, removes what was built, and returns m's exit
// code, for TestMain: os.Exit(builds.Run(m)).
func (b *Builds) Run(m *testing.M) int {
	defer b.Remove()
	return m.Run()
}
