package mcpflighttest_test

import (
	"context"
	"io"
	"testing"

	"github.com/mcpflight/mcpflight/mcpflighttest"
	"github.com/mcpflight/mcpflight/refserver"
)

// ExampleRun is the test a server's author adds to the server's package,
// one call per way the server is reached. Each function below is a test
// (func TestConformance(t *testing.T) in a _test.go file); go test then
// lists every case as a subtest, TestConformance/2025-11-25/cancel/id-zero,
// and -run picks cases as mcpflight check's --case does. This package's
// own tests run the same calls against the reference server:
// TestReferenceServerCommand, TestReferenceServerURL,
// TestReferenceServerHandler and TestReferenceServerPipes.
func ExampleRun() {
	// A stdio server, started once per case; its profile names the tools
	// the cases need (mcpflight profile init drafts one).
	command := func(t *testing.T) {
		mcpflighttest.Run(t, mcpflighttest.Command("./myserver", "--stdio"),
			mcpflighttest.ProfileFile("testdata/myserver.yaml"))
	}
	// A Streamable HTTP server already running, checked under 2026-07-28
	// with the cancellation cases only, two at a time.
	url := func(t *testing.T) {
		mcpflighttest.Run(t, mcpflighttest.URL("http://127.0.0.1:8080/mcp"),
			mcpflighttest.ProfileFile("testdata/myserver.yaml"),
			mcpflighttest.Revision("2026-07-28"),
			mcpflighttest.Cases("cancel/*"),
			mcpflighttest.Jobs(2))
	}
	// An http.Handler, served by the test process on a loopback port; a
	// broken SHOULD fails too (Strict).
	handler := func(t *testing.T) {
		h := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
		t.Cleanup(h.Close)
		mcpflighttest.Run(t, mcpflighttest.Handler(h), mcpflighttest.ProfileFile("reference"), mcpflighttest.Strict())
	}
	// A server that serves one session on a reader and a writer, in the
	// test process: for a go-sdk server, s.Run(ctx, &mcp.IOTransport{Reader:
	// in, Writer: out}). A finding not fixed yet is listed as Known.
	pipes := func(t *testing.T) {
		srv := refserver.New(refserver.Options{})
		mcpflighttest.Run(t, mcpflighttest.Pipes(func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
			return srv.Serve(ctx, in, out)
		}), mcpflighttest.ProfileFile("reference"),
			mcpflighttest.Known("logging/invalid-level-rejected", "accepts an unknown log level; fix pending"))
	}
	_, _, _, _ = command, url, handler, pipes
}
