package wireschema

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/ring"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/results"
)

// Violation is one problem of one message of a chronology.
type Violation struct {
	// Seq is the message's sequence number in its chronology.
	Seq uint64 `json:"seq"`
	// Revision is the protocol revision whose schema was applied.
	Revision string `json:"revision"`
	// Definition is the schema definition the message had to match, e.g.
	// "InitializeResult" ("ext-tasks:…" for the tasks extension's).
	Definition string `json:"definition"`
	Problem
	// Requirement is the requirement ID the violation breaks (see
	// Requirement).
	Requirement string `json:"requirement"`
}

// String is one line saying what the violation is, as the results model
// words it (results.SchemaViolation.String).
func (v Violation) String() string { return v.Record().String() }

// Record is the violation as the results model keeps it.
func (v Violation) Record() results.SchemaViolation {
	return results.SchemaViolation{Seq: v.Seq, Revision: v.Revision, Definition: v.Definition, Pointer: v.Pointer,
		Keyword: v.Keyword, KeywordLocation: v.KeywordLocation, Message: v.Message, Requirement: v.Requirement}
}

// Result is what Check found in a chronology.
type Result struct {
	// Checked counts the inbound frames validated.
	Checked int
	// Unchecked counts the inbound frames that could not be: cut short
	// by a bound of the chronology. A frame that is not JSON at all is
	// checked, and a violation (NotJSON).
	Unchecked int
	// Violations lists every problem, in chronology order.
	Violations []Violation
}

// Check validates every inbound frame of events, a chronology, against
// revision's schema: requests and notifications by their method, a
// response by the method of the outbound request with its id (the latest
// before it).
func Check(revision string, events []chrono.Event) (Result, error) {
	s, err := Load(revision)
	if err != nil {
		return Result{}, err
	}
	t := NewTracker(s)
	var r Result
	for _, ev := range events {
		checked, vs := t.Event(ev)
		switch {
		case checked:
			r.Checked++
		case ev.Kind == chrono.KindFrame && ev.Dir == chrono.In:
			r.Unchecked++
		}
		r.Violations = append(r.Violations, vs...)
	}
	return r, nil
}

// Tracker validates a chronology's frames one at a time, in order,
// remembering the requests sent so that it can check their responses. It
// is not safe for concurrent use.
type Tracker struct {
	s    *Schema
	sent map[string]Request // outbound requests by id (Summary.ID)
	// answered holds the ids whose latest request got a response.
	answered map[string]bool
	// alts are, by id, earlier requests still unanswered when a later
	// one reused their id (a case does so on purpose): a result for the
	// id may answer any of them.
	alts map[string][]Request
	// taskMethods is the method of the request that created each task,
	// by task ID, for tasks/result.
	taskMethods map[string]string
	// answeredOrder and taskOrder are the ids answered and the tasks
	// created, oldest first, in rings of keepAnswered and keepTasks:
	// what falls out of a ring is forgotten, so that a long conversation
	// (watch) holds what is in flight and the latest of the rest.
	answeredOrder *ring.Ring[string]
	taskOrder     *ring.Ring[string]
}

// keepAnswered is how many answered ids a Tracker remembers, and
// keepTasks how many tasks: a response for an id answered longer ago
// (a very late duplicate) is validated as one for a request it does not
// know, against the response envelope alone, and a tasks/result for an
// older task as one whose creating request it does not know.
const (
	keepAnswered = 4096
	keepTasks    = 4096
)

// markAnswered records that id's latest request was answered, and
// forgets the oldest answered id past keepAnswered unless it was sent
// again since.
func (t *Tracker) markAnswered(id string) {
	t.answered[id] = true
	old, full := t.answeredOrder.Push(id)
	if full && t.answered[old] && len(t.alts[old]) == 0 {
		delete(t.answered, old)
		delete(t.sent, old)
		delete(t.alts, old)
	}
}

// NewTracker starts a tracker for one chronology.
func NewTracker(s *Schema) *Tracker {
	return &Tracker{s: s, sent: map[string]Request{}, answered: map[string]bool{}, alts: map[string][]Request{}, taskMethods: map[string]string{},
		answeredOrder: ring.New[string](keepAnswered), taskOrder: ring.New[string](keepTasks)}
}

// Event looks at one chronology event. An outbound request is
// remembered; an inbound frame is validated (checked is true), unless it
// was cut short or is not JSON.
func (t *Tracker) Event(ev chrono.Event) (checked bool, vs []Violation) {
	if ev.Kind != chrono.KindFrame || ev.Summary == nil {
		return false, nil
	}
	if ev.Dir == chrono.Out {
		t.sentFrame(ev)
		return false, nil
	}
	if ev.Dir != chrono.In || ev.Truncated {
		return false, nil
	}
	if t.answer2025(ev) {
		return false, nil
	}
	inst, err := DecodeInstance(ev.Raw)
	if err != nil {
		return true, []Violation{t.notJSON(ev)}
	}
	return true, t.inbound(ev, inst)
}

// NotJSON is the Keyword of the violation of a frame that is not JSON at
// all (a banner, a log line, a blank line on stdout): no message, so no
// definition of the schema, can match it.
const NotJSON = "json"

// notJSON is the violation of an inbound frame that is not JSON: over
// stdio it breaks STD-4 ("The server MUST NOT write anything to its
// stdout that is not a valid MCP message"), elsewhere the base rule.
func (t *Tracker) notJSON(ev chrono.Event) Violation {
	req := BaseRule
	if ev.Channel == "stdout" && AppliesTo("STD-4", t.s.Revision) {
		req = "STD-4"
	}
	what := "a blank line"
	if line := bytes.TrimSpace(ev.Raw); len(line) > 0 {
		first, _, _ := bytes.Cut(line, []byte("\n"))
		what = fmt.Sprintf("%q", chrono.Sanitize(chrono.Clip(string(first), 80), false))
	}
	return Violation{Seq: ev.Seq, Revision: t.s.Revision, Definition: "JSONRPCMessage", Requirement: req,
		Problem: Problem{Keyword: NotJSON, Message: "not JSON, so no JSON-RPC message: " + what}}
}

// answer2025 reports whether ev answers an initialize under the
// 2026-07-28 schema: the method does not exist in that revision (a case
// of a 2026-07-28 run sends it to compare a dual-era server's eras), so
// its answer is a 2025-11-25 message the 2026-07-28 schema cannot judge.
func (t *Tracker) answer2025(ev chrono.Event) bool {
	k := ev.Summary.Kind
	if t.s.Revision != Rev20260728 || (k != "result" && k != "error") {
		return false
	}
	req := t.sent[ev.Summary.ID]
	return req.Method == mcp.MethodInitialize || req.MayAnswer2025
}

func (t *Tracker) sentFrame(ev chrono.Event) {
	if ev.Summary.Kind != "request" || ev.Truncated {
		return
	}
	req := Request{Method: ev.Summary.Method}
	if t.s.Revision == Rev20260728 && bytes.Contains(ev.Raw, []byte(`"io.modelcontextprotocol/clientCapabilities"`)) &&
		!bytes.Contains(ev.Raw, []byte(`"io.modelcontextprotocol/protocolVersion"`)) {
		// A request without the envelope's version (a case sends one on
		// purpose, RPC-52) may be answered as a legacy one by a dual-era
		// server: that answer is not the 2026-07-28 schema's to judge.
		req.MayAnswer2025 = true
	}
	if req.Method == mcp.MethodToolsCall || req.Method == mcp.MethodTasksResult {
		var p struct {
			Params struct {
				Task   json.RawMessage `json:"task"`
				TaskID string          `json:"taskId"`
			} `json:"params"`
		}
		if json.Unmarshal(ev.Raw, &p) == nil {
			req.TaskAugmented = p.Params.Task != nil
			req.TaskMethod = t.taskMethods[p.Params.TaskID]
		}
	}
	if prev, ok := t.sent[ev.Summary.ID]; ok && !t.answered[ev.Summary.ID] {
		t.alts[ev.Summary.ID] = append(t.alts[ev.Summary.ID], prev)
	}
	delete(t.answered, ev.Summary.ID)
	t.sent[ev.Summary.ID] = req
}

// answering returns the request a result for id answers: the latest one
// sent with id, or, when an earlier one with the same id was still
// unanswered, the first of them whose result definition result matches
// (else the latest). The request it returns counts as answered.
func (t *Tracker) answering(id string, result map[string]any) (Request, bool) {
	req, known := t.sent[id]
	alts := t.alts[id]
	if !known || len(alts) == 0 {
		t.markAnswered(id)
		return req, known
	}
	for i, alt := range alts {
		d, ok := t.s.ResultDef(alt, result)
		if !ok {
			continue
		}
		if ps, err := t.s.Validate(d, result, "/result"); err == nil && len(ps) == 0 {
			t.alts[id] = append(alts[:i:i], alts[i+1:]...)
			return alt, true
		}
	}
	// The latest request is answered; an earlier one is still owed.
	last := len(alts) - 1
	t.sent[id], t.alts[id] = alts[last], alts[:last]
	return req, true
}

// inbound validates one decoded inbound message.
func (t *Tracker) inbound(ev chrono.Event, inst any) []Violation {
	msg, _ := inst.(map[string]any)
	var out []Violation
	seen := map[[2]string]bool{}
	add := func(d Def, v any, at string, kind string) {
		ps, err := t.s.Validate(d, v, at)
		if err != nil {
			return // a table names a definition the schema lacks: tests catch it
		}
		for _, p := range ps {
			key := [2]string{p.Pointer, p.Keyword}
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, Violation{Seq: ev.Seq, Revision: t.s.Revision, Definition: d.String(), Problem: p,
				Requirement: Requirement(t.s.Revision, kind, p)})
		}
	}
	kind := ev.Summary.Kind
	if ev.Summary.Malformed != "" {
		kind = shape(msg)
	}
	switch {
	case kind == "":
		// JSON, but not even shaped like a JSON-RPC message.
		add(core("JSONRPCMessage"), inst, "", kind)
	case ev.Summary.Malformed != "":
		// Shaped like one kind of message but no valid one: its envelope
		// says what is wrong (a string error code, a wrong version).
		add(core(map[string]string{"request": envRequest, "notification": envNotification, "result": envResult, "error": envError}[kind]), inst, "", kind)
	case kind == "request":
		d, _ := t.s.RequestDef(ev.Summary.Method)
		add(d, inst, "", kind)
	case kind == "notification":
		d, _ := t.s.NotificationDef(ev.Summary.Method)
		add(d, inst, "", kind)
	case kind == "error":
		if len(t.alts[ev.Summary.ID]) == 0 {
			t.markAnswered(ev.Summary.ID)
		}
		add(core(envError), nullIDAsAbsent(msg), "", kind)
	case kind == "result":
		result, _ := msg["result"].(map[string]any)
		req, known := t.answering(ev.Summary.ID, result)
		if known {
			if d, ok := t.s.ResultDef(req, result); ok && result != nil {
				add(d, result, "/result", kind)
				t.noteTask(req, d, result)
			}
		}
		add(core(envResult), inst, "", kind)
	}
	return out
}

// shape is the kind of message a frame that failed to decode was
// evidently meant to be, by its members; "" when it is not an object or
// has none of them.
func shape(msg map[string]any) string {
	if msg == nil {
		return ""
	}
	_, id := msg["id"]
	_, method := msg["method"]
	_, result := msg["result"]
	_, err := msg["error"]
	switch {
	case err && !result && !method:
		return "error"
	case result && !err && !method:
		return "result"
	case method && id && !result && !err:
		return "request"
	case method && !id && !result && !err:
		return "notification"
	}
	return ""
}

// noteTask remembers which request created a task, for tasks/result.
func (t *Tracker) noteTask(req Request, d Def, result map[string]any) {
	if d.Name != "CreateTaskResult" {
		return
	}
	id, _ := result["taskId"].(string)
	if task, ok := result["task"].(map[string]any); ok {
		id, _ = task["taskId"].(string)
	}
	if id == "" {
		return
	}
	if _, known := t.taskMethods[id]; !known {
		if old, full := t.taskOrder.Push(id); full {
			delete(t.taskMethods, old)
		}
	}
	t.taskMethods[id] = req.Method
}
