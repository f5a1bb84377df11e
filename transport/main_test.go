package transport

import (
	"os"
	"testing"

	"github.com/mcpflight/mcpflight/internal/testchild"
)

// testdataBuilds builds the testdata commands these tests start
// (testdata/httpserve), once each.
var testdataBuilds = &testchild.Builds{Root: ".."}

// TestMain removes what testdataBuilds built once the tests are over.
func TestMain(m *testing.M) { os.Exit(testdataBuilds.Run(m)) }
