package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/refserver"
)

// echoServer wraps the reference server's HTTP handler with one that
// echoes the credentials it receives back at the checker: in a response
// header on every answer, in a notifications/message and a JSON-RPC
// error for ping and for a tools/call of "echo", in a tool's name and
// description for tools/list when the URL asks for it (?list=echo), and
// in the body of a 500 answering every DELETE.
type echoServer struct {
	next http.Handler
	mu   sync.Mutex
	seen map[string]int // "METHOD auth key" -> count
}

func (s *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth, key := r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")
	s.mu.Lock()
	s.seen[r.Method+" "+auth+" "+key]++
	s.mu.Unlock()
	echo := "you sent Authorization=" + auth + " and X-Api-Key=" + key
	w.Header().Set("X-Echo", echo)
	w.Header().Add("Set-Cookie", "echo="+key)
	if r.Method == http.MethodDelete {
		http.Error(w, "will not delete: "+echo, http.StatusInternalServerError)
		return
	}
	if r.Method != http.MethodPost {
		s.next.ServeHTTP(w, r)
		return
	}
	m := peekRequest(r)
	enc := jsonString
	switch {
	case m.Method == "ping" || m.Method == "tools/call" && m.Params.Name == "echo":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", enc(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "error", "logger": "echo " + key, "data": echo}}))
		// The credentials again, every character a JSON \u escape: no
		// byte pattern matches them.
		var obfuscated strings.Builder
		for _, r := range auth + " " + key {
			fmt.Fprintf(&obfuscated, `\u%04x`, r)
		}
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"%s\"}}\n\n", obfuscated.String())
		fmt.Fprintf(w, "data: %s\n\n", enc(map[string]any{"jsonrpc": "2.0", "id": m.ID,
			"error": map[string]any{"code": -32000, "message": "rejected: " + echo, "data": map[string]string{"auth": auth}}}))
	case m.Method == "tools/list" && r.URL.Query().Get("list") == "echo":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, enc(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": []any{
			map[string]any{"name": "echo-" + key, "description": echo, "inputSchema": map[string]any{"type": "object"}}}}}))
	default:
		s.next.ServeHTTP(w, r)
	}
}

// secretForms lists the ways a secret could be written out: as it is,
// JSON-, HTML- (both escapers) and URL-encoded, base64, and its random
// core alone, which every encoding but base64 leaves intact.
func secretForms(secret, core string) []string {
	j, _ := json.Marshal(secret)
	return []string{secret, strings.Trim(string(j), `"`), html.EscapeString(secret),
		strings.ReplaceAll(template.HTMLEscapeString(secret), "+", "&#43;"), url.QueryEscape(secret),
		base64.StdEncoding.EncodeToString([]byte(secret)), core}
}

// TestNoSecretLeaks runs check (every report format), show, call, tools
// and shell as the built binary against a server that echoes the
// credentials back everywhere it can, and proves the server got them
// and no output holds them in any encoding.
func TestNoSecretLeaks(t *testing.T) {
	t.Parallel()
	random := func() string {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	authCore, keyCore := random(), random()
	// "+" and "/" differ in the HTML, URL and JSON encodings.
	authToken, key := "tok_"+authCore+"+/A=", "key<&>"+keyCore+"+x"
	const keyVar = "MCPFLIGHT_TEST_API_KEY"

	h := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
	srv := &echoServer{next: h, seen: map[string]int{}}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	url := ts.URL + "/mcp"
	dir := t.TempDir()
	creds := []string{"--header", "Authorization: Bearer " + authToken, "--header-env", "X-Api-Key=" + keyVar}

	type output struct {
		name string
		data []byte
	}
	var outputs []output
	run := func(name, stdin string, args ...string) {
		t.Helper()
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), keyVar+"="+key, "NO_COLOR=1")
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("%s: %v", name, err)
		}
		outputs = append(outputs, output{name + " stdout", stdout.Bytes()}, output{name + " stderr", stderr.Bytes()})
	}

	jsonFile, junitFile, htmlFile := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.html")
	jsonlDir := filepath.Join(dir, "jsonl")
	run("check", "", append([]string{"check", "--protocol", "2025-11-25", "--url", url, "--profile", "reference", "-v",
		"--json", jsonFile, "--junit", junitFile, "--html", htmlFile, "--jsonl-dir", jsonlDir,
		"--case", "ping/empty-result", "--case", "logging/message-shape", "--case", "http/resume-while-running",
		"--case", "cancel/mid-work-no-response"}, creds...)...)
	run("check --json -", "", append([]string{"check", "--protocol", "2025-11-25", "--url", url, "--json", "-", "--case", "ping/empty-result"}, creds...)...)
	run("call", "", append([]string{"call", "--url", url, "-v", "echo", "{}"}, creds...)...)
	run("tools", "", append([]string{"tools", "--url", url + "?list=echo"}, creds...)...)
	run("shell", "ping\nquit\n", append([]string{"shell", "--url", url, "-v"}, creds...)...)
	// A malformed header is refused without being quoted back.
	run("bad header", "", "check", "--protocol", "2025-11-25", "--url", url, "--header", "Authorization Bearer "+authToken)

	for _, f := range []string{jsonFile, junitFile, htmlFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, output{filepath.Base(f), b})
	}
	files, _ := filepath.Glob(filepath.Join(jsonlDir, "*.jsonl"))
	if len(files) != 4 {
		t.Fatalf("%d chronologies in --jsonl-dir, want 4", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, output{filepath.Base(f), b})
		run("show "+filepath.Base(f), "", "show", f)
	}

	// The server got the credentials on every kind of request, so an
	// output without them proves the redaction and not a broken send.
	srv.mu.Lock()
	for _, method := range []string{"POST", "GET", "DELETE"} {
		if srv.seen[method+" Bearer "+authToken+" "+key] == 0 {
			t.Errorf("the server never got both credentials on a %s; it saw %v", method, srv.seen)
		}
	}
	for k, n := range srv.seen {
		if !strings.HasSuffix(k, " Bearer "+authToken+" "+key) {
			t.Errorf("%d requests without the credentials: %q", n, k)
		}
	}
	srv.mu.Unlock()

	// Any 12 characters of a random core, or of its \u-escaped form, would be a partial leak, as a
	// clipped text could give.
	var pieces []string
	for _, core := range []string{authCore, keyCore} {
		var escaped strings.Builder
		for _, r := range core {
			fmt.Fprintf(&escaped, `\u%04x`, r)
		}
		for i := 0; i+12 <= len(core); i++ {
			pieces = append(pieces, core[i:i+12], escaped.String()[6*i:6*(i+2)])
		}
	}
	var all bytes.Buffer
	for _, o := range outputs {
		all.Write(o.data)
		for _, p := range pieces {
			if i := bytes.Index(o.data, []byte(p)); i >= 0 {
				t.Errorf("%s holds part of a secret, %q: …%s…", o.name, p, o.data[max(0, i-80):min(len(o.data), i+len(p)+20)])
				break
			}
		}
		for _, form := range append(secretForms(authToken, authCore), secretForms(key, keyCore)...) {
			if i := bytes.Index(o.data, []byte(form)); i >= 0 {
				t.Errorf("%s holds a secret as %q: …%s…", o.name, form, o.data[max(0, i-80):min(len(o.data), i+len(form)+20)])
			}
		}
	}
	// The echoes did come back, redacted.
	for _, want := range []string{"Authorization: Bearer [redacted]", "X-Api-Key: [redacted]",
		"you sent Authorization=[redacted] and X-Api-Key=[redacted]", "echo-[redacted]", "will not delete"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no output shows %q: the echo path is not exercised", want)
		}
	}
	if !strings.Contains(all.String(), "want 'NAME: VALUE'") {
		t.Error("the malformed --header was not refused")
	}
	if t.Failed() && os.Getenv("MCPFLIGHT_DUMP") != "" {
		for i, o := range outputs {
			_ = os.WriteFile(filepath.Join(os.Getenv("MCPFLIGHT_DUMP"), fmt.Sprintf("%02d-%s", i, strings.NewReplacer("/", "_", " ", "_").Replace(o.name))), o.data, 0o644)
		}
	}
}

func TestHeaderFlagErrors(t *testing.T) {
	t.Parallel()
	const secret = "Bearer do-not-print-me-123"
	tests := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"stdio target", []string{"check", "--protocol", "2025-11-25", "--stdio", "x", "--header", "Authorization: " + secret}, "apply to HTTP targets only"},
		{"built-in over stdio", []string{"check", "--protocol", "2025-11-25", "--header", "Authorization: " + secret}, "apply to HTTP targets only"},
		{"tools without url", []string{"tools", "--header-env", "Authorization=MCP_AUTH"}, "apply to HTTP targets only"},
		{"call url and stdio", []string{"call", "--url", "http://127.0.0.1:1/mcp", "--stdio", "x", "slow"}, "--url and --stdio name two targets"},
		{"profile init without url", []string{"profile", "init", "--header-env", "Authorization=MCP_AUTH"}, "apply to HTTP targets only"},
		{"profile init url and stdio", []string{"profile", "init", "--url", "http://127.0.0.1:1/mcp", "--stdio", "x"}, "--url and --stdio name two targets"},
		{"profile init reserved", []string{"profile", "init", "--url", "http://127.0.0.1:1/mcp", "--header", "Accept: text/html"}, "Accept is set by mcpflight's transport itself"},
		{"no colon", []string{"check", "--protocol", "2025-11-25", "--url", "http://127.0.0.1:1/mcp", "--header", "Authorization " + secret}, "--header #1: want 'NAME: VALUE'"},
		{"bad name", []string{"check", "--protocol", "2025-11-25", "--url", "http://127.0.0.1:1/mcp", "--header", "Bad Name: " + secret}, `"Bad Name" is not a valid header name`},
		{"reserved", []string{"check", "--protocol", "2025-11-25", "--url", "http://127.0.0.1:1/mcp", "--header", "mcp-session-id: " + secret}, "Mcp-Session-Id is set by mcpflight's transport itself"},
		{"reserved accept", []string{"shell", "--url", "http://127.0.0.1:1/mcp", "--header", "Accept: text/html"}, "Accept is set by mcpflight's transport itself"},
		{"CRLF", []string{"check", "--protocol", "2025-11-25", "--url", "http://127.0.0.1:1/mcp", "--header", "X-A: " + secret + "\r\nX-B: b"}, "header X-A: the value contains a line break"},
		{"empty", []string{"check", "--protocol", "2025-11-25", "--url", "http://127.0.0.1:1/mcp", "--header", "X-A:  "}, "header X-A: the value is empty"},
		{"env form", []string{"check", "--protocol", "2025-11-25", "--url", "http://127.0.0.1:1/mcp", "--header-env", "Authorization"}, "want NAME=VARIABLE"},
		{"env unset", []string{"check", "--protocol", "2025-11-25", "--url", "http://127.0.0.1:1/mcp", "--header-env", "Authorization=MCP_UNSET"}, "the environment variable MCP_UNSET is unset or empty"},
		{"env CRLF", []string{"call", "--url", "http://127.0.0.1:1/mcp", "--header-env", "Authorization=MCP_CRLF", "slow"}, "header Authorization: the value contains a line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			env := Env{Stdout: &stdout, Stderr: &stderr, ServeCommand: []string{binary},
				Getenv: func(k string) string {
					return map[string]string{"MCP_AUTH": secret, "MCP_CRLF": secret + "\nX-Evil: 1"}[k]
				}}
			code := env.Run(t.Context(), tt.args)
			if code != ExitError || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr lacks %q:\n%s", code, tt.want, stderr.String())
			}
			if strings.Contains(stdout.String()+stderr.String(), "do-not-print-me") {
				t.Errorf("the header value was quoted back:\n%s", stderr.String())
			}
		})
	}
}

// TestHeaderEnvSent: --header-env reads its value through Env.Getenv and
// sends it, and a short credential is said to be searched for nowhere.
func TestHeaderEnvSent(t *testing.T) {
	t.Parallel()
	h := refserver.New(refserver.Options{}).HTTPHandler(refserver.HTTPOptions{})
	srv := &echoServer{next: h, seen: map[string]int{}}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	var stdout, stderr bytes.Buffer
	env := Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
		return map[string]string{"MCP_AUTH": "Bearer abc", "MCP_KEY": "key-from-env-0123"}[k]
	}}
	code := env.Run(t.Context(), []string{"tools", "--url", ts.URL + "/mcp", "--header-env", "Authorization=MCP_AUTH", "--header-env", "X-Api-Key=MCP_KEY"})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.seen["POST Bearer abc key-from-env-0123"] == 0 {
		t.Errorf("the server saw %v", srv.seen)
	}
	if !strings.Contains(stderr.String(), "header Authorization is shorter than 6 characters") {
		t.Errorf("no warning about the short credential:\n%s", stderr.String())
	}
}

func TestURLPasswordRedacted(t *testing.T) {
	t.Parallel()
	e := Env{redact: chrono.NewRedactor()}
	if got := e.redactedURL("http://user:pw-123456@127.0.0.1:1/mcp"); got != "http://user:xxxxx@127.0.0.1:1/mcp" {
		t.Errorf("redactedURL = %q", got)
	}
	if got := e.redact.String("echo pw-123456"); got != "echo "+chrono.Redacted {
		t.Errorf("the URL's password is not a secret: %q", got)
	}
	if got := e.redactedURL("http://127.0.0.1:1/mcp?api_key=query-secret-1&tenant=acme"); got != "http://127.0.0.1:1/mcp?api_key=xxxxx&tenant=acme" {
		t.Errorf("redactedURL = %q", got)
	}
	if got := e.redact.String("echo query-secret-1 acme"); got != "echo "+chrono.Redacted+" acme" {
		t.Errorf("the URL's api_key is not a secret: %q", got)
	}
}

// peekedRequest is the gist of a POSTed JSON-RPC message.
type peekedRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// peekRequest reads the gist of r's JSON-RPC body and puts the body back
// for the next handler.
func peekRequest(r *http.Request) peekedRequest {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m peekedRequest
	_ = json.Unmarshal(body, &m)
	return m
}

// jsonString is v as JSON text.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
