// Command inflightbreak is a tiny MCP server (2025-11-25) with one
// in-flight defect, for the tests that the diagnosis names the broken
// rule, not another one the defect trips over. It speaks
// newline-delimited JSON-RPC on stdin and stdout, or, with -http ADDR,
// Streamable HTTP on ADDR (it then prints its URL on the first line of
// stdout). -mode picks the defect:
//
//	task-cancelled   every task ends cancelled right after its
//	                 CreateTaskResult, though nobody cancels it
//	resume-loses     (HTTP) a resume with Last-Event-ID replays what was
//	                 stored so far and then stays silent: the rest of the
//	                 call, its result included, goes only to a later resume
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

func main() {
	mode := flag.String("mode", "task-cancelled", "task-cancelled or resume-loses")
	addr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	flag.Parse()
	s := &server{mode: *mode, tasks: map[string]map[string]any{}}
	if *addr == "" {
		in := bufio.NewScanner(os.Stdin)
		in.Buffer(make([]byte, 1<<20), 1<<20)
		var mu sync.Mutex
		for in.Scan() {
			if out := s.answer(in.Bytes()); out != nil {
				mu.Lock()
				os.Stdout.Write(append(out, '\n'))
				mu.Unlock()
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
	http.Serve(ln, s)
}

type server struct {
	mode string
	mu   sync.Mutex
	n    int
	// tasks by ID (task-cancelled); events the resumable log (resume-loses).
	tasks  map[string]map[string]any
	events []event
}

type event struct {
	id, stream string
	data       []byte
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name   string          `json:"name"`
		TaskID string          `json:"taskId"`
		Cursor *string         `json:"cursor"`
		Task   json.RawMessage `json:"task"`
		Meta   struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

func reply(id json.RawMessage, result any) []byte {
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return out
}

func fail(id json.RawMessage, code int, msg string) []byte {
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return out
}

// answer is the response to one message, nil for a notification.
func (s *server) answer(line []byte) []byte {
	var req request
	if json.Unmarshal(line, &req) != nil || req.ID == nil {
		return nil
	}
	switch req.Method {
	case "initialize":
		caps := map[string]any{"tools": map[string]any{}}
		if s.mode == "task-cancelled" {
			caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
		}
		return reply(req.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": map[string]any{"name": "inflightbreak-" + s.mode, "version": "1"}})
	case "ping":
		return reply(req.ID, map[string]any{})
	case "tools/list":
		tool := map[string]any{"name": "slow", "inputSchema": map[string]any{"type": "object"}}
		if s.mode == "task-cancelled" {
			tool = map[string]any{"name": "research", "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "required"}}
		}
		return reply(req.ID, map[string]any{"tools": []any{tool}})
	}
	if s.mode != "task-cancelled" {
		return fail(req.ID, -32601, "method not found")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	switch req.Method {
	case "tools/call":
		if req.Params.Task == nil {
			return fail(req.ID, -32601, "research must be called as a task")
		}
		s.n++
		id := fmt.Sprintf("%016x%016x", time.Now().UnixNano(), s.n*7919)
		task := map[string]any{"taskId": id, "status": "working", "createdAt": now, "lastUpdatedAt": now, "ttl": 60000, "pollInterval": 50}
		out := reply(req.ID, map[string]any{"task": task})
		// The defect: the task is cancelled as soon as it exists.
		cancelled := map[string]any{}
		for k, v := range task {
			cancelled[k] = v
		}
		cancelled["status"], cancelled["statusMessage"] = "cancelled", "The task was cancelled."
		s.tasks[id] = cancelled
		return out
	case "tasks/get", "tasks/result", "tasks/cancel":
		t, ok := s.tasks[req.Params.TaskID]
		switch {
		case !ok:
			return fail(req.ID, -32602, "no such task")
		case req.Method == "tasks/get":
			return reply(req.ID, t)
		case req.Method == "tasks/cancel":
			return fail(req.ID, -32602, "task already cancelled")
		}
		return reply(req.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "cancelled"}}, "isError": true,
			"_meta": map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": req.Params.TaskID}}})
	case "tasks/list":
		if req.Params.Cursor != nil {
			return fail(req.ID, -32602, "unknown cursor")
		}
		var all []any
		for _, t := range s.tasks {
			all = append(all, t)
		}
		return reply(req.ID, map[string]any{"tasks": all})
	}
	return fail(req.ID, -32601, "method not found")
}

// ServeHTTP is the Streamable HTTP endpoint: one session, JSON answers,
// and (resume-loses) the slow tool's SSE stream.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "inflightbreak-session")
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodGet:
		s.resume(w, r)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var body json.RawMessage
	if json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var req request
	_ = json.Unmarshal(body, &req)
	if req.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if s.mode == "resume-loses" && req.Method == "tools/call" {
		s.slow(w, r, req)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(s.answer(body))
}

// store appends an event of stream to the log and returns its ID.
func (s *server) store(stream string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := stream + "-" + strconv.Itoa(len(s.events)+1)
	s.events = append(s.events, event{id, stream, data})
	return id
}

func writeEvent(w http.ResponseWriter, id string, data []byte) bool {
	_, err := fmt.Fprintf(w, "id: %s\ndata: %s\n\n", id, data)
	w.(http.Flusher).Flush()
	return err == nil
}

// slow runs three steps of 100 ms, each a progress notification, then
// the result: every event is stored and written to the POST's stream
// while the client is there. The work goes on when the client leaves.
func (s *server) slow(w http.ResponseWriter, r *http.Request, req request) {
	s.mu.Lock()
	s.n++
	stream := "s" + strconv.Itoa(s.n)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	live := writeEvent(w, s.store(stream, nil), nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 3; i++ {
			time.Sleep(100 * time.Millisecond)
			msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
				"params": map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": 3}})
			id := s.store(stream, msg)
			if live && r.Context().Err() == nil {
				live = writeEvent(w, id, msg)
			}
		}
		res := reply(req.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}})
		id := s.store(stream, res)
		if live && r.Context().Err() == nil {
			writeEvent(w, id, res)
		}
	}()
	select {
	case <-done:
	case <-r.Context().Done():
		// The client left; the work goes on in its goroutine.
	}
}

// resume replays the stored events of the stream after Last-Event-ID
// and then, the defect, stays silent until the client leaves: events
// stored later reach only a later resume.
func (s *server) resume(w http.ResponseWriter, r *http.Request) {
	last := r.Header.Get("Last-Event-ID")
	s.mu.Lock()
	var replay []event
	stream := ""
	for i, ev := range s.events {
		if ev.id == last {
			stream = ev.stream
			for _, later := range s.events[i+1:] {
				if later.stream == stream && later.data != nil {
					replay = append(replay, later)
				}
			}
		}
	}
	s.mu.Unlock()
	if stream == "" {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for _, ev := range replay {
		writeEvent(w, ev.id, ev.data)
	}
	<-r.Context().Done()
}
