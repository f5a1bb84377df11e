// Package revisionsrv is a scripted MCP server for the tests of revision
// negotiation: a strict 2026-07-28 server, one that serves both revisions,
// one whose server/discover contradicts its initialize, and 2025-11-25
// servers that fail the server/discover probe in different ways. It answers
// over stdio (Serve) and Streamable HTTP (Handler); testdata/revisionserver
// wraps it in a command. It is stateless: every answer depends on the
// message alone, which is what 2026-07-28 asks of a server and is enough for
// a legacy one in these tests.
package revisionsrv

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
)

// Mode is how the server behaves.
type Mode string

// The modes.
const (
	// Only2026 is a strict 2026-07-28 server: initialize is answered
	// -32022 with data.supported ["2026-07-28"] (over HTTP with 400,
	// LIF-49), every request's envelope is checked (-32602 for a missing
	// field, -32022 for another version, and over HTTP -32020 for a
	// header that differs from the body), and ping is an unknown method.
	Only2026 Mode = "2026-only"
	// Dual serves both eras: server/discover lists both revisions, and
	// initialize agrees to 2025-11-25.
	Dual Mode = "dual"
	// Inconsistent is Dual whose server/discover lists only 2026-07-28,
	// while initialize still agrees to 2025-11-25.
	Inconsistent Mode = "inconsistent"
	// MethodNotFound2025 is a 2025-11-25 server: server/discover is
	// answered -32601 (over HTTP, like the TypeScript SDK v1: 400 with a
	// JSON-RPC error -32000 "Server not initialized" and a null id).
	MethodNotFound2025 Mode = "2025-32601"
	// InvalidParams2025 answers server/discover -32602 (over HTTP: 400
	// with a plain-text body).
	InvalidParams2025 Mode = "2025-32602"
	// Silent2025 never answers server/discover (over HTTP it holds the
	// request until the client goes).
	Silent2025 Mode = "2025-silent"
	// Future is a modern server of a later revision only: every request
	// is answered -32022 with data.supported ["2027-01-01"].
	Future Mode = "future"
)

// Modes lists every mode.
func Modes() []Mode {
	return []Mode{Only2026, Dual, Inconsistent, MethodNotFound2025, InvalidParams2025, Silent2025, Future}
}

// is2025 reports whether the mode is a 2025-11-25-only server.
func (m Mode) is2025() bool {
	return m == MethodNotFound2025 || m == InvalidParams2025 || m == Silent2025
}

// speaks2025 reports whether initialize is agreed to.
func (m Mode) speaks2025() bool { return m.is2025() || m == Dual || m == Inconsistent }

// supported are the revisions server/discover and -32022 name.
func (m Mode) supported() []string {
	switch m {
	case Dual:
		return []string{"2026-07-28", "2025-11-25"}
	case Future:
		return []string{"2027-01-01"}
	}
	return []string{"2026-07-28"}
}

// silent marks an answer the server never sends.
const silent = -1

// answer is the server's answer to one message: its HTTP status (200, or
// 202 with no body for a notification; silent for none) and body. Over
// stdio only the body counts, nil meaning no line. hdr is the request's
// MCP-Protocol-Version header over HTTP, nil over stdio.
func (m Mode) answer(line []byte, hdr *string) (int, []byte) {
	msg, err := jsonrpc.Decode(line)
	if err != nil {
		return http.StatusBadRequest, errorBody(jsonrpc.ID{}, jsonrpc.CodeParseError, "Parse error", nil)
	}
	if msg.Kind != jsonrpc.KindRequest {
		return http.StatusAccepted, nil
	}
	var p struct {
		Name string                     `json:"name"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	version, hasVersion := "", false
	if raw, ok := p.Meta[mcp.MetaProtocolVersion]; ok {
		hasVersion = json.Unmarshal(raw, &version) == nil
	}
	_, hasCaps := p.Meta[mcp.MetaClientCapabilities]
	id := msg.ID
	httpErr := func(code int, message string, data any) (int, []byte) {
		status := http.StatusBadRequest
		if code == jsonrpc.CodeMethodNotFound {
			status = http.StatusNotFound
		}
		return status, errorBody(id, code, message, data)
	}
	unsupported := func(requested string) (int, []byte) {
		return httpErr(mcp.CodeUnsupportedProtocolVersion, "Unsupported protocol version",
			map[string]any{"supported": m.supported(), "requested": requested})
	}

	// Legacy modes: no server/discover before (or after) initialize.
	if m.is2025() && msg.Method == mcp.MethodServerDiscover {
		switch m {
		case Silent2025:
			return silent, nil
		case InvalidParams2025:
			if hdr != nil {
				return http.StatusBadRequest, []byte("Bad Request: no valid session ID provided")
			}
			return http.StatusOK, errorBody(id, jsonrpc.CodeInvalidParams, "Invalid params", nil)
		}
		if hdr != nil {
			return http.StatusBadRequest, errorBody(jsonrpc.ID{}, -32000, "Bad Request: Server not initialized", nil)
		}
		return http.StatusOK, errorBody(id, jsonrpc.CodeMethodNotFound, "Method not found", nil)
	}
	if msg.Method == mcp.MethodInitialize {
		var ip struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(msg.Params, &ip)
		if !m.speaks2025() {
			return unsupported(ip.ProtocolVersion)
		}
		return http.StatusOK, resultBody(id, map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "revisionsrv-" + string(m), "version": "1"},
		})
	}
	if m.is2025() || (!hasVersion && m.speaks2025()) {
		// A legacy request (no envelope) to a server that speaks 2025.
		return m.answer2025(id, msg.Method)
	}

	// A modern request.
	switch {
	case m == Future:
		return unsupported(version)
	case !hasVersion || !hasCaps:
		return httpErr(jsonrpc.CodeInvalidParams, "Invalid params: the request lacks a required _meta field", nil)
	case hdr != nil && *hdr != version:
		return httpErr(mcp.CodeHeaderMismatch, fmt.Sprintf("Header mismatch: MCP-Protocol-Version %q does not match the body's %q", *hdr, version), nil)
	case !slices.Contains(m.supported(), version):
		return unsupported(version)
	}
	meta := map[string]any{mcp.MetaServerInfo: map[string]any{"name": "revisionsrv-" + string(m), "version": "1"}}
	switch msg.Method {
	case mcp.MethodServerDiscover:
		return http.StatusOK, resultBody(id, map[string]any{"resultType": mcp.ResultTypeComplete, "supportedVersions": m.supported(),
			"capabilities": map[string]any{"tools": map[string]any{}}, "_meta": meta, "cacheScope": "private", "ttlMs": 0})
	case mcp.MethodToolsList:
		return http.StatusOK, resultBody(id, map[string]any{"resultType": mcp.ResultTypeComplete, "_meta": meta, "cacheScope": "private", "ttlMs": 0,
			"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
	case mcp.MethodToolsCall:
		return http.StatusOK, resultBody(id, map[string]any{"resultType": mcp.ResultTypeComplete, "_meta": meta,
			"content": []any{map[string]any{"type": "text", "text": "echo " + p.Name}}})
	}
	return httpErr(jsonrpc.CodeMethodNotFound, "Method not found", nil)
}

// answer2025 answers a 2025-11-25 request after initialize.
func (m Mode) answer2025(id jsonrpc.ID, method string) (int, []byte) {
	switch method {
	case mcp.MethodPing:
		return http.StatusOK, resultBody(id, map[string]any{})
	case mcp.MethodToolsList:
		return http.StatusOK, resultBody(id, map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
	}
	return http.StatusOK, errorBody(id, jsonrpc.CodeMethodNotFound, "Method not found", nil)
}

func resultBody(id jsonrpc.ID, result any) []byte {
	out, _ := jsonrpc.EncodeResult(id, result)
	return out
}

func errorBody(id jsonrpc.ID, code int, message string, data any) []byte {
	e := &jsonrpc.Error{Code: code, Message: message}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	if !id.IsValid() {
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": e})
		return out
	}
	out, _ := jsonrpc.EncodeError(id, e)
	return out
}

// Serve answers newline-delimited messages from in on out until in ends.
func Serve(mode Mode, in io.Reader, out io.Writer) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		status, body := mode.answer(sc.Bytes(), nil)
		if status == silent || body == nil {
			continue
		}
		if _, err := out.Write(append(body, '\n')); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Handler serves Streamable HTTP: POST only (GET and DELETE are 405), one
// JSON body per request.
func Handler(mode Mode) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		hdr := r.Header.Get(mcp.HeaderProtocolVersion)
		status, out := mode.answer(body, &hdr)
		switch {
		case status == silent:
			<-r.Context().Done()
			return
		case out == nil:
			w.WriteHeader(status)
			return
		case strings.HasPrefix(string(out), "{"):
			w.Header().Set("Content-Type", "application/json")
		default:
			w.Header().Set("Content-Type", "text/plain")
		}
		w.WriteHeader(status)
		_, _ = w.Write(out)
	})
}

// Conn is a stdio-shaped connection to a server of mode in this process,
// recording into log: what Serve answers over in-memory pipes. Closing it
// ends the server.
func Conn(mode Mode, log *chrono.Log) transport.Conn {
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	go func() {
		_ = Serve(mode, toServerR, toClientW)
		toClientW.Close()
	}()
	return transport.NewStream(toClientR, toServerW, transport.StreamConfig{Log: log, InChannel: "stdout", OutChannel: "stdin",
		OnClose: func(context.Context) transport.Teardown {
			return transport.Teardown{ExitedAfter: transport.StepCloseInput}
		}})
}
