package cases_test

import (
	"os"
	"testing"

	"github.com/mcpflight/mcpflight/internal/testparallel"
)

// TestMain runs four parallel tests per CPU at once: most of this
// package's tests wait on server-everything's pace (the careful runs of
// TestSameVerdictsAsTheCarefulRun wait minutes), and the work they do at
// once is bounded by runSlots and the runner's own jobs.
func TestMain(m *testing.M) {
	testparallel.Raise(4)
	os.Exit(m.Run())
}
