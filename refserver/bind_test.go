package refserver

import (
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestListenHTTPBind: loopback addresses bind as they are; any other
// needs the explicit opt-in, BindOptions.Any (HTTP-5).
func TestListenHTTPBind(t *testing.T) {
	t.Parallel()
	srv := New(Options{})
	for _, tt := range []struct {
		addr    string
		anyHost bool
		ok      bool
	}{
		{"127.0.0.1:0", false, true},
		{"localhost:0", false, true},
		{"[::1]:0", false, true},
		{"0.0.0.0:0", false, false},
		{":0", false, false},
		{"192.0.2.1:0", false, false},
		{"0.0.0.0:0", true, true},
	} {
		ep, err := srv.ListenHTTP(tt.addr, BindOptions{Any: tt.anyHost})
		if (err == nil) != tt.ok {
			t.Errorf("ListenHTTP(%q, Any %v): err %v; want ok %v", tt.addr, tt.anyHost, err, tt.ok)
		}
		if err == nil {
			ep.Close()
			ep.Close() // idempotent
		} else if !errors.Is(err, ErrNotLoopback) {
			var ne *net.OpError
			if !errors.As(err, &ne) { // [::1] may be missing on a host without IPv6
				t.Errorf("ListenHTTP(%q): error %v is not ErrNotLoopback", tt.addr, err)
			}
		}
	}
}

// TestHTTPServerBoundsHeaders: a client that never finishes its headers
// is disconnected at the header deadline.
func TestHTTPServerBoundsHeaders(t *testing.T) {
	t.Parallel()
	if hs := NewHTTPServer(http.NotFoundHandler(), DefaultHeaderTimeout); hs.ReadHeaderTimeout <= 0 || hs.MaxHeaderBytes <= 0 || hs.IdleTimeout <= 0 {
		t.Fatalf("unbounded server: %+v", hs)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewHTTPServer(http.NotFoundHandler(), 50*time.Millisecond)
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
