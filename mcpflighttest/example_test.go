package mcpflighttest_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/internal/testchild"
	"github.com/mcpflight/mcpflight/mcpflighttest"
	"github.com/mcpflight/mcpflight/refserver"
)

// TestMain lets the test binary stand in for a stdio server: started with
// MCPFLIGHTTEST_SERVE=1 it serves the reference server on its stdin and
// stdout, which is what TestReferenceServerCommand checks.
func TestMain(m *testing.M) {
	if os.Getenv("MCPFLIGHTTEST_SERVE") == "1" {
		if err := refserver.New(refserver.Options{}).Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The whole catalogue against the reference server on in-process pipes,
// the way a Go SDK server is checked without a subprocess.
func TestReferenceServerPipes(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	mcpflighttest.Run(t, mcpflighttest.Pipes(func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
		return srv.Serve(ctx, in, out)
	}), mcpflighttest.ProfileFile("reference"))
}

// The whole catalogue against the reference server's Streamable HTTP
// endpoint, served by the test process.
func TestReferenceServerHandler(t *testing.T) {
	h := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
	t.Cleanup(h.Close)
	mcpflighttest.Run(t, mcpflighttest.Handler(h), mcpflighttest.ProfileFile("reference"))
}

// The stdio cases against a child process (this test binary, serving the
// reference server), shutdown ladder and teardown grade included.
func TestReferenceServerCommand(t *testing.T) {
	t.Setenv("MCPFLIGHTTEST_SERVE", "1")
	// Under -race each child would otherwise wait a second as it exits.
	key, value, _ := strings.Cut(testchild.RaceEnv(), "=")
	t.Setenv(key, value)
	mcpflighttest.Run(t, mcpflighttest.Command(os.Args[0]), mcpflighttest.ProfileFile("reference"),
		mcpflighttest.Cases("stdio/*", "cancel/mid-work-no-response", "ping/*"))
}

// The cancellation, progress and HTTP cases against a Streamable HTTP
// server already running at a URL, as a server started outside the test
// is checked: here the reference server's HTTP handler, served on a
// loopback port of its own (127.0.0.1:0) by a plain http.Server.
func TestReferenceServerURL(t *testing.T) {
	h := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		h.Close()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serving: %v", err)
		}
	})
	mcpflighttest.Run(t, mcpflighttest.URL("http://"+ln.Addr().String()+"/mcp"), mcpflighttest.ProfileFile("reference"),
		mcpflighttest.Cases("cancel/*", "progress/*", "http/*"))
}
