// Command badinput is a tiny MCP server (2025-11-25) that misbehaves on
// bad input, for the robustness cases' tests. It speaks
// newline-delimited JSON-RPC on stdin and stdout, or, with -http ADDR,
// Streamable HTTP on ADDR (it then prints its URL on the first line of
// stdout). It declares tools (one, "echo") and tasks. -mode picks the
// fault:
//
//	die-on-malformed  a frame that is not a JSON object makes it exit
//	                  with status 3, over stdio and over HTTP
//	taskid-internal   tasks/get, tasks/result and tasks/cancel without a
//	                  string taskId are answered -32603 (Internal error)
//	plain             no fault: a server with a tool and no profile
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

func main() {
	mode := flag.String("mode", "plain", "die-on-malformed, taskid-internal or plain")
	addr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	flag.Parse()
	if *addr == "" {
		in := bufio.NewScanner(os.Stdin)
		in.Buffer(make([]byte, 1<<20), 1<<20)
		for in.Scan() {
			if out := answer(*mode, in.Bytes()); out != nil {
				os.Stdout.Write(append(out, '\n'))
			}
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
		case http.MethodDelete:
			return
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		out := answer(*mode, body)
		if out == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "badinput-session")
		w.Write(out)
	}))
}

// answer is the response to one message, nil for a notification.
func answer(mode string, line []byte) []byte {
	var req struct {
		ID     json.RawMessage            `json:"id"`
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &req) != nil {
		if mode == "die-on-malformed" {
			fmt.Fprintln(os.Stderr, "badinput: malformed input, exiting")
			os.Exit(3)
		}
		return reply(nil, nil, &rpcError{-32700, "Parse error"})
	}
	if req.ID == nil {
		return nil
	}
	var result any = map[string]any{}
	switch req.Method {
	case "initialize":
		result = map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities": map[string]any{
				"tools": map[string]any{},
				"tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
					"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}},
			},
			"serverInfo": map[string]any{"name": "badinput", "version": "1"},
		}
	case "ping":
	case "tools/list":
		result = map[string]any{"tools": []any{map[string]any{"name": "echo", "description": "echoes its text",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}}}}
	case "tools/call":
		var name string
		if json.Unmarshal(req.Params["name"], &name) != nil || name != "echo" {
			return reply(req.ID, nil, &rpcError{-32602, "unknown tool"})
		}
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "echo"}}}
	case "tasks/list":
		var cursor string
		if raw, ok := req.Params["cursor"]; ok && json.Unmarshal(raw, &cursor) != nil {
			return reply(req.ID, nil, &rpcError{-32602, "cursor must be a string"})
		}
		result = map[string]any{"tasks": []any{}}
	case "tasks/get", "tasks/result", "tasks/cancel":
		var id string
		if json.Unmarshal(req.Params["taskId"], &id) != nil || id == "" {
			if mode == "taskid-internal" {
				return reply(req.ID, nil, &rpcError{-32603, "Internal error"})
			}
			return reply(req.ID, nil, &rpcError{-32602, "taskId must be a string"})
		}
		return reply(req.ID, nil, &rpcError{-32602, "no such task"})
	default:
		return reply(req.ID, nil, &rpcError{-32601, "method not found"})
	}
	return reply(req.ID, result, nil)
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// reply encodes a response; a nil id is a null one.
func reply(id json.RawMessage, result any, e *rpcError) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	m := map[string]any{"jsonrpc": "2.0", "id": id}
	if e != nil {
		m["error"] = e
	} else {
		m["result"] = result
	}
	out, _ := json.Marshal(m)
	return out
}
