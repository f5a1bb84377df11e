// Command schemabreak is a tiny MCP server whose answers break the
// official schema, for the schema check's tests. It speaks
// newline-delimited JSON-RPC on stdin and stdout, or, with -http ADDR,
// Streamable HTTP on ADDR (it then prints its URL on the first line of
// stdout). -mode picks the fault:
//
//	tools-yes    initialize declares "capabilities": {"tools": "yes"}, and
//	             the one tool has "inputSchema": "none"
//	name-number  serverInfo.name is a number
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
	mode := flag.String("mode", "tools-yes", "tools-yes or name-number")
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
		if r.Method != http.MethodPost {
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
		w.Write(out)
	}))
}

// answer is the response to one message, nil for a notification.
func answer(mode string, line []byte) []byte {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &req) != nil || req.ID == nil {
		return nil
	}
	var result any = map[string]any{}
	switch req.Method {
	case "initialize":
		info := map[string]any{"name": "schemabreak", "version": "1"}
		caps := map[string]any{"tools": map[string]any{}}
		if mode == "name-number" {
			info["name"] = 42
		} else {
			caps["tools"] = "yes"
		}
		result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": info}
	case "tools/list":
		schema := any("none")
		if mode == "name-number" {
			schema = map[string]any{"type": "object"}
		}
		result = map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": schema}}}
	case "ping":
	default:
		out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		return out
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	return out
}
