package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/internal/termsafe"
	"github.com/mcpflight/mcpflight/refserver"
)

// hostileText is everything a server can send to hurt a terminal, a page
// or an XML parser.
const hostileText = "csi\x1b[2J osc52\x1b]52;c;cHduZWQ=\x07 osc8\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ " +
	"cr\roverwrite bs\b c1\u009b31m bidi\u202eevil <script>alert(1)</script> \"><img src=x onerror=alert(2)> ]]> " +
	"bad\xff\xfeutf8 nul\x00end"

// hostileServer is the reference server named hostileText, behind a
// handler that adds hostileText to a response header of every answer,
// answers ping with a log message and an error made of it (and 1 MB
// more), and DELETE with a 500 whose body is it.
func hostileServer(t *testing.T) string {
	h := refserver.New(refserver.Options{Name: hostileText, Version: hostileText}).HTTPHandler(refserver.HTTPOptions{})
	huge := strings.Repeat("H", 1<<20)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Go's client refuses C0 controls in a header (the handshake
		// then fails, with the line quoted safely); the rest passes.
		w.Header().Set("X-Evil", "<script>alert(3)</script> c1\u009b31m bidi\u202eevil bad\xffutf8")
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, hostileText)
			return
		}
		m := peekRequest(r)
		enc := jsonString
		if m.Method == "tools/list" && r.URL.Query().Get("list") == "hostile" {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, enc(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": []any{
				map[string]any{"name": "echo" + hostileText, "description": hostileText, "inputSchema": map[string]any{"type": "object"},
					"execution": map[string]any{"taskSupport": hostileText}}}}}))
			return
		}
		if m.Method == "ping" || m.Method == "tools/call" && m.Params.Name == "echo" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", enc(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
				"params": map[string]any{"progressToken": hostileText, "progress": 1, "message": hostileText}}))
			fmt.Fprintf(w, "data: %s\n\n", enc(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
				"params": map[string]any{"level": "error", "logger": hostileText, "data": hostileText}}))
			fmt.Fprintf(w, "data: %s\n\n", enc(map[string]any{"jsonrpc": "2.0", "id": m.ID,
				"error": map[string]any{"code": -32000, "message": hostileText + huge}}))
			return
		}
		h.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(handler)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return ts.URL + "/mcp"
}

// TestHostileServerEveryFormat runs check against a server whose
// serverInfo, headers, log messages, errors and bodies are hostile, and
// checks every output: the console (with -v), JSON, JUnit, HTML, the
// JSON Lines chronologies and show's rendering of them.
func TestHostileServerEveryFormat(t *testing.T) {
	t.Parallel()
	url := hostileServer(t)
	dir := t.TempDir()
	jsonFile, junitFile, htmlFile, jsonlDir := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html"), filepath.Join(dir, "jsonl")
	r := runCLI(t, "", "check", "--protocol", "2025-11-25", "--url", url, "--profile", "reference", "-v", "--json", jsonFile, "--junit", junitFile,
		"--html", htmlFile, "--jsonl-dir", jsonlDir, "--case", "ping/empty-result", "--case", "logging/message-shape")
	if r.code != ExitNonConformant {
		t.Errorf("exit %d, want %d (ping fails)\n%s\n%s", r.code, ExitNonConformant, r.stderr, r.stdout[:min(len(r.stdout), 3000)])
	}
	outputs := map[string][]byte{"stdout": []byte(r.stdout), "stderr": []byte(r.stderr)}
	for _, f := range []string{jsonFile, junitFile, htmlFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[filepath.Base(f)] = b
	}
	files, _ := filepath.Glob(filepath.Join(jsonlDir, "*.jsonl"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[filepath.Base(f)] = b
		s := runCLI(t, "", "show", f)
		if s.code != 0 {
			t.Errorf("show %s: exit %d: %s", f, s.code, s.stderr)
		}
		outputs["show "+filepath.Base(f)] = []byte(s.stdout + s.stderr)
	}
	if len(files) != 2 {
		t.Fatalf("%d chronologies, want 2", len(files))
	}
	for name, out := range outputs {
		if what, i := termsafe.FirstUnsafe(out); i >= 0 {
			t.Errorf("%s: %s at byte %d: %q", name, what, i, out[max(0, i-40):min(len(out), i+40)])
		}
		if len(out) > 1<<20 {
			t.Errorf("%s: %d bytes: the 1 MB error was not cut", name, len(out))
		}
	}
	// The hostile text did arrive: escaped, not dropped.
	for name, wants := range map[string][]string{
		"stdout": {`csi\u001b[2J`, `c1\u009b31m`, `bidi\u202eevil`},
		"show ping_empty-result@2025-11-25.jsonl": {`c1\u009b31m bidi\u202eevil`},
	} {
		for _, want := range wants {
			if !strings.Contains(string(outputs[name]), want) {
				t.Errorf("%s lacks the visible escape %q:\n%s", name, want, outputs[name])
			}
		}
	}
	html := string(outputs["r.html"])
	if strings.Contains(html, "<script>alert") || strings.Contains(html, "<img") || strings.Count(html, "<script") != 1 {
		t.Error("html: hostile markup not escaped")
	}
	if !strings.Contains(html, "&lt;script&gt;alert(1)") {
		t.Error("html: the hostile text is missing")
	}
	d := xml.NewDecoder(bytes.NewReader(outputs["r.xml"]))
	for {
		if _, err := d.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("junit: not well-formed: %v", err)
			}
			break
		}
	}
	var doc struct {
		Server struct{ Name string } `json:"server"`
	}
	if err := json.Unmarshal(outputs["r.json"], &doc); err != nil {
		t.Fatal(err)
	}
	if want := strings.ReplaceAll(hostileText, "\xff\xfe", "\ufffd\ufffd"); doc.Server.Name != want {
		t.Errorf("json: server name %q, want it exact: %q", doc.Server.Name, want)
	}
}

// TestHostileServerInteractive runs call, tools and shell against the
// hostile server: their console output holds no control character.
func TestHostileServerInteractive(t *testing.T) {
	t.Parallel()
	url := hostileServer(t)
	for _, tt := range []struct {
		name, stdin string
		args        []string
	}{
		{"call", "", []string{"call", "--url", url, "-v", "echo", "{}"}},
		{"call task", "", []string{"call", "--url", url, "--task", "echo", "{}"}},
		{"tools", "", []string{"tools", "--url", url + "?list=hostile"}},
		{"shell", "ping\nlist_tools\ncall_tool echo {}\nexpect text nothing\nquit\n", []string{"shell", "--url", url + "?list=hostile", "-v"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, tt.stdin, tt.args...)
			for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
				if what, i := termsafe.FirstUnsafe([]byte(out)); i >= 0 {
					t.Errorf("%s: %s at byte %d: %q", name, what, i, out[max(0, i-60):min(len(out), i+40)])
				}
				if len(out) > 256<<10 {
					t.Errorf("%s: %d bytes: the 1 MB error was not cut", name, len(out))
				}
			}
			if !strings.Contains(r.stdout+r.stderr, `\u001b[2J`) {
				t.Errorf("the hostile text is not shown escaped:\n%s\n%s", r.stdout, r.stderr)
			}
		})
	}
}
