package cli

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/refserver"
)

// TestCheckHTTP drives the catalogue over Streamable HTTP: the built-in
// server in process (--transport http) and a --url target.
func TestCheckHTTP(t *testing.T) {
	t.Parallel()
	h := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"built-in over http", []string{"--transport", "http", "--case", "http/*"}, ExitConformant, "[http]"},
		{"fault over http", []string{"--transport", "http", "--target-fault", "no-origin-check", "--case", "http/origin-forbidden"}, ExitNonConformant, "HTTP-3"},
		{"url", []string{"--url", ts.URL, "--profile", "reference", "--case", "http/*", "--case", "cancel/mid-work-no-response"}, ExitConformant, "ended with DELETE"},
		{"url and stdio", []string{"--url", ts.URL, "--stdio", "x"}, ExitError, ""},
		{"bad transport", []string{"--transport", "carrier-pigeon"}, ExitError, ""},
		{"fault with url", []string{"--url", ts.URL, "--target-fault", "no-origin-check"}, ExitError, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The http/* cases are 2025-11-25's (the 2026 ones are http26).
			r := runCLI(t, "", append([]string{"check", "--protocol", "2025-11-25"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.want) {
				t.Errorf("exit code %d (want %d); stdout lacks %q?\n%s\nstderr:\n%s", r.code, tt.code, tt.want, r.stdout, r.stderr)
			}
		})
	}
}

func TestServeHTTPRefusesRemoteBind(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", "serve", "--http", "0.0.0.0:0")
	if r.code == ExitConformant || !strings.Contains(r.stderr, "--listen-any") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestServeLimits: serve --max-frame passes the limit to the server; the
// session answers the frame over it with -32700 and goes on.
func TestServeLimits(t *testing.T) {
	t.Parallel()
	in := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200) + `"}}
{"jsonrpc":"2.0","id":2,"method":"ping"}
`
	r := runCLI(t, in, "serve", "--stdio", "--max-frame", "100", "--max-in-flight", "4")
	if r.code != 0 {
		t.Fatalf("code %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":null`) || !strings.Contains(lines[0], `-32700`) || lines[1] != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

// TestListenHTTPBind: loopback addresses bind as they are; any other
// needs the --listen-any opt-in (HTTP-5).
func TestListenHTTPBind(t *testing.T) {
	t.Parallel()
	srv := refserver.New(refserver.Options{})
	for _, tt := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:0", false, true},
		{"localhost:0", false, true},
		{"0.0.0.0:0", false, false},
		{":0", false, false},
		{"192.0.2.1:0", false, false},
		{"0.0.0.0:0", true, true},
	} {
		url, stop, err := listenHTTP(srv, tt.addr, tt.remote, refserver.HTTPOptions{}, nil)
		if (err == nil) != tt.ok {
			t.Errorf("listenHTTP(%q, listen-any %v): url %q, err %v; want ok %v", tt.addr, tt.remote, url, err, tt.ok)
		}
		if err == nil {
			stop()
		} else if !strings.Contains(err.Error(), "--listen-any") {
			t.Errorf("listenHTTP(%q): error %q does not name --listen-any", tt.addr, err)
		}
	}
}

// TestHTTPServerBoundsHeaders: a client that never finishes its headers
// is disconnected at the header deadline.
func TestHTTPServerBoundsHeaders(t *testing.T) {
	t.Parallel()
	if hs := httpServer(http.NotFoundHandler(), readHeaderTimeout); hs.ReadHeaderTimeout <= 0 || hs.MaxHeaderBytes <= 0 || hs.IdleTimeout <= 0 {
		t.Fatalf("unbounded server: %+v", hs)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httpServer(http.NotFoundHandler(), 50*time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = hs.Close()
		<-done
	})
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second)) // safety net
	if _, err := io.WriteString(conn, "GET /mcp HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server kept a connection with unfinished headers open")
	}
}
