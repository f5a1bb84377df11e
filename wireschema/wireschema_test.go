package wireschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/internal/termsafe"
)

// TestEmbeddedCopiesAreCurrent checks that the embedded schemas are the
// shared originals, when the shared folder is beside the repo.
func TestEmbeddedCopiesAreCurrent(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "spec")
	for _, c := range []struct {
		original string
		copy     []byte
	}{
		{filepath.Join(shared, "2025-11-25", "schema.json"), schema20251125},
		{filepath.Join(shared, "2026-07-28", "schema.json"), schema20260728},
		{filepath.Join(shared, "2026-07-28", "extensions", "tasks", "ext-tasks", "schema_draft_schema.json"), schemaTasksExt},
	} {
		t.Run(c.original, func(t *testing.T) {
			orig, err := os.ReadFile(c.original)
			if os.IsNotExist(err) {
				t.Skipf("%s does not exist: no shared folder beside the repo to compare with", c.original)
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(orig) != string(c.copy) {
				t.Errorf("the embedded copy differs from %s: copy it again into wireschema/schemas", c.original)
			}
		})
	}
}

// TestSchemasAreDraft202012 confirms the draft the validator applies: the
// one every schema declares.
func TestSchemasAreDraft202012(t *testing.T) {
	for name, doc := range map[string][]byte{"2025-11-25": schema20251125, "2026-07-28": schema20260728, "ext-tasks": schemaTasksExt} {
		var head struct {
			Schema string `json:"$schema"`
		}
		if err := json.Unmarshal(doc, &head); err != nil {
			t.Fatal(err)
		}
		if head.Schema != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s declares %q", name, head.Schema)
		}
	}
}

func TestLoadUnknownRevision(t *testing.T) {
	if _, err := Load("2024-11-05"); !errors.Is(err, ErrUnknownRevision) {
		t.Fatalf("Load(2024-11-05): %v, want ErrUnknownRevision", err)
	}
	a, err := Load(Rev20251125)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Load(Rev20251125); a != b {
		t.Error("a second Load compiled again")
	}
}

// TestTablesNameExistingDefinitions checks every definition the tables
// use against the revision's schemas, and the differences between the
// revisions that the tables rely on.
func TestTablesNameExistingDefinitions(t *testing.T) {
	for rev, m := range maps {
		s, err := Load(rev)
		if err != nil {
			t.Fatal(err)
		}
		var all []Def
		for _, table := range []map[string]Def{m.requests, m.notifications, m.results} {
			for _, d := range table {
				all = append(all, d)
			}
		}
		all = append(all, core(envRequest), core(envNotification), core(envResult), core(envError), core("JSONRPCMessage"), core("Result"))
		for _, d := range []Def{m.taskResult, m.inputRequired, m.resultTypeTask} {
			if d.Name != "" {
				all = append(all, d)
			}
		}
		for _, d := range all {
			if s.lookup(d) == nil {
				t.Errorf("%s: the tables name %s, which the schema lacks", rev, d)
			}
		}
	}
	s2025, _ := Load(Rev20251125)
	s2026, _ := Load(Rev20260728)
	for _, c := range []struct {
		s    *Schema
		def  string
		want bool
	}{
		{s2025, "InitializeResult", true},
		{s2026, "InitializeResult", false}, // 2026-07-28 has no handshake
		{s2026, "DiscoverResult", true},
		{s2026, "ResultType", true},
		{s2026, "RequestMetaObject", true},
		{s2025, "DiscoverResult", false},
		{s2026, "PingRequest", false},
	} {
		if got := c.s.Def(c.def); got != c.want {
			t.Errorf("%s has %s: %v, want %v", c.s.Revision, c.def, got, c.want)
		}
	}
	if !s2026.ExtDef("CreateTaskResult") || s2025.ExtDef("CreateTaskResult") {
		t.Error("the tasks extension's schema goes with 2026-07-28 only")
	}
}

// frame is one hand-written frame of a test chronology.
type frame struct {
	dir chrono.Direction
	raw string
}

func out(raw string) frame { return frame{chrono.Out, raw} }
func in(raw string) frame  { return frame{chrono.In, raw} }

// chronology records frames as the transports do.
func chronology(frames ...frame) []chrono.Event {
	log := chrono.New()
	for _, f := range frames {
		log.Frame(f.dir, "test", []byte(f.raw), nil, nil)
	}
	return log.Events()
}

// brief is a violation without the parts every row repeats.
type brief struct {
	Seq                          uint64
	Definition, Pointer, Keyword string
	Requirement                  string
}

func briefs(vs []Violation) []brief {
	var out []brief
	for _, v := range vs {
		out = append(out, brief{v.Seq, v.Definition, v.Pointer, v.Keyword, v.Requirement})
	}
	return out
}

const (
	initReq  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	goodInit = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`
)

func TestCheck20251125(t *testing.T) {
	tests := []struct {
		name      string
		frames    []frame
		want      []brief
		unchecked int
	}{
		{"a clean session", []frame{
			out(initReq), in(goodInit),
			out(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
			in(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"slow","inputSchema":{"type":"object"}}]}}`),
			out(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"t1"}}}`),
			in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t1","progress":0.5,"total":1}}`),
			in(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`),
			in(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}`),
			in(`{"jsonrpc":"2.0","id":"s1","method":"ping"}`),
			out(`{"jsonrpc":"2.0","id":4,"method":"ping"}`),
			in(`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no"}}`),
		}, nil, 0},
		{"capabilities.tools a string, serverInfo.name a number", []frame{
			out(initReq),
			in(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":"yes"},"serverInfo":{"name":7,"version":"1"}}}`),
		}, []brief{
			{2, "InitializeResult", "/result/capabilities/tools", "type", "RPC-2"},
			{2, "InitializeResult", "/result/serverInfo/name", "type", "RPC-2"},
		}, 0},
		{"a tool whose inputSchema is a string", []frame{
			out(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
			in(`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":"none"}]}}`),
		}, []brief{{2, "ListToolsResult", "/result/tools/0/inputSchema", "type", "RPC-2"}}, 0},
		{"a response is checked by its request's method, found by id", []frame{
			out(`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`),
			out(`{"jsonrpc":"2.0","id":7,"method":"ping"}`),
			in(`{"jsonrpc":"2.0","id":7,"result":{"tools":"not checked: ping's result is EmptyResult"}}`),
			in(`{"jsonrpc":"2.0","id":"a","result":{}}`),
		}, []brief{{4, "ListToolsResult", "/result", "required", "RPC-2"}}, 0},
		{"task augmentation: CreateTaskResult, then tasks/result as CallToolResult", []frame{
			out(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","task":{"ttl":1000}}}`),
			in(`{"jsonrpc":"2.0","id":5,"result":{"task":{"taskId":"T1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":1000}}}`),
			in(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"done","createdAt":"x","lastUpdatedAt":"x","ttl":null}}`),
			out(`{"jsonrpc":"2.0","id":6,"method":"tasks/result","params":{"taskId":"T1"}}`),
			in(`{"jsonrpc":"2.0","id":6,"result":{"content":"text"}}`),
		}, []brief{
			{3, "TaskStatusNotification", "/params/status", "enum", "RPC-2"},
			{5, "CallToolResult", "/result/content", "type", "RPC-2"},
		}, 0},
		{"a task-augmented call answered without a task is an ordinary CallToolResult", []frame{
			out(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","task":{}}}`),
			in(`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"ok"}]}}`),
		}, nil, 0},
		{"error shapes: RPC-13 for a string code, RPC-12 without a message", []frame{
			out(`{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			in(`{"jsonrpc":"2.0","id":1,"error":{"code":"-32601","message":"x"}}`),
			out(`{"jsonrpc":"2.0","id":2,"method":"ping"}`),
			in(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601}}`),
		}, []brief{
			{2, "JSONRPCErrorResponse", "/error/code", "type", "RPC-13"},
			{4, "JSONRPCErrorResponse", "/error", "required", "RPC-12"},
		}, 0},
		{"the rows of a log level, a task's ttl and lastUpdatedAt, the tasks capability", []frame{
			in(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"WARN","data":"x"}}`),
			out(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","task":{"ttl":1000}}}`),
			in(`{"jsonrpc":"2.0","id":5,"result":{"task":{"taskId":"T1","status":"working","createdAt":"x","lastUpdatedAt":"x"}}}`),
			in(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"working","createdAt":"x","ttl":null}}`),
			out(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`),
			in(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":true}},"serverInfo":{"name":"s","version":"1"}}}`),
		}, []brief{
			{1, "LoggingMessageNotification", "/params/level", "enum", "LOG-2"},
			{3, "CreateTaskResult", "/result/task", "required", "TSK-41"},
			{4, "TaskStatusNotification", "/params", "required", "TSK-39"},
			{6, "InitializeResult", "/result/capabilities/tasks/list", "type", "TSK-2"},
		}, 0},
		{"vendor methods and unknown responses get the envelope only", []frame{
			in(`{"jsonrpc":"2.0","method":"mcpflight/checkpoint","params":{"anything":[1,2]}}`),
			in(`{"jsonrpc":"2.0","id":"c1","method":"mcpflight/whatever","params":"not an object"}`),
			in(`{"jsonrpc":"2.0","id":99,"result":{"never":"asked"}}`),
		}, []brief{{2, "JSONRPCRequest", "/params", "type", "RPC-2"}}, 0},
		{"a server request by its method", []frame{
			in(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":"ten"}}`),
		}, []brief{{1, "CreateMessageRequest", "/params/maxTokens", "type", "RPC-2"}}, 0},
		{"a frame that is JSON but no JSON-RPC message breaks the envelope", []frame{
			in(`{"jsonrpc":"1.0","id":1,"result":{}}`),
			in(`"just a string"`),
		}, []brief{
			{1, "JSONRPCResultResponse", "/jsonrpc", "const", "RPC-2"},
			{2, "JSONRPCMessage", "", "anyOf", "RPC-2"},
		}, 0},
		{"a frame that is not JSON breaks the base rule off stdio", []frame{
			in(`garbage`),
		}, []brief{{1, "JSONRPCMessage", "", NotJSON, "RPC-2"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Check(Rev20251125, chronology(tt.frames...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, briefs(r.Violations)); diff != "" {
				t.Errorf("violations (-want +got):\n%s\nall: %+v", diff, r.Violations)
			}
			if r.Unchecked != tt.unchecked {
				t.Errorf("unchecked %d, want %d", r.Unchecked, tt.unchecked)
			}
		})
	}
}

// TestCheck20260728 checks the 2026-07-28 mapping on hand-written frames:
// server/discover, resultType (RPC-40), per-request _meta, the tasks
// extension's results, and a server request, which that revision does not
// know (RPC-61).
func TestCheck20260728(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	tests := []struct {
		name   string
		frames []frame
		want   []brief
	}{
		{"a clean exchange", []frame{
			out(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"s","version":"1"},"cacheScope":"public","ttlMs":0}}`),
			out(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x",` + meta + `}}`),
			in(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`),
			in(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[]}}`),
		}, nil},
		{"a result without resultType breaks RPC-40", []frame{
			out(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`),
		}, []brief{{2, "ListToolsResult", "/result", "required", "RPC-40"}}},
		{"server/discover with a bad cacheScope", []frame{
			out(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"s","version":"1"},"cacheScope":"everyone","ttlMs":0}}`),
		}, []brief{{2, "DiscoverResult", "/result/cacheScope", "enum", "RPC-2"}}},
		{"resultType task is the extension's CreateTaskResult", []frame{
			out(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x",` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":3,"result":{"resultType":"task","taskId":"T","status":"working","createdAt":"x","lastUpdatedAt":"x"}}`),
		}, []brief{{2, "ext-tasks:CreateTaskResult", "/result", "required", "RPC-2"}}},
		{"resultType input_required is an InputRequiredResult", []frame{
			out(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x",` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","requestState":7}}`),
		}, []brief{{2, "InputRequiredResult", "/result/requestState", "type", "RPC-2"}}},
		{"the extension's tasks/get", []frame{
			out(`{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"T",` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","taskId":"T","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}}`),
			in(`{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"T","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":"soon"}}`),
		}, []brief{{3, "ext-tasks:TaskStatusNotification", "/params/ttlMs", "anyOf", "RPC-2"}}},
		// robust/duplicate-inflight-id reuses a call's id for a
		// server/discover while the call runs: each result is judged as
		// the answer of the request whose definition it fits.
		{"an id reused while in flight: each result answers its own request", []frame{
			out(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x",` + meta + `}}`),
			out(`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"s","version":"1"},"cacheScope":"public","ttlMs":0}}`),
			in(`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}`),
		}, nil},
		{"an id reused while in flight: a result that fits neither is judged as the latest's", []frame{
			out(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x",` + meta + `}}`),
			out(`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":"x"}}`),
		}, []brief{{3, "DiscoverResult", "/result", "required", "RPC-2"}}},
		{"an id reused after its answer is the new request's", []frame{
			out(`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"s","version":"1"},"cacheScope":"public","ttlMs":0}}`),
			out(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x",` + meta + `}}`),
			in(`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"s","version":"1"},"cacheScope":"public","ttlMs":0}}`),
		}, []brief{{4, "CallToolResult", "/result", "required", "RPC-2"}}},
		// initialize does not exist in 2026-07-28: a case of a 2026 run
		// sends it to compare a dual-era server's eras, and its answer is
		// a 2025-11-25 message the 2026-07-28 schema cannot judge.
		{"initialize's answer is left to the 2025-11-25 schema", []frame{
			out(initReq),
			in(goodInit),
		}, nil},
		{"a server request is unknown to 2026-07-28", []frame{
			in(`{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Check(Rev20260728, chronology(tt.frames...))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, briefs(r.Violations)); diff != "" {
				t.Errorf("violations (-want +got):\n%s\nall: %+v", diff, r.Violations)
			}
		})
	}
}

// TestMessagesQuoteNoValue feeds hostile values and member names: the
// violation's texts show neither the values nor raw control characters.
func TestMessagesQuoteNoValue(t *testing.T) {
	evil := "\x1b]52;c;aGk=\x07\u202e<script>"
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"protocolVersion": evil, "serverInfo": map[string]any{"name": map[string]any{evil: evil}, "version": "1"},
		"capabilities": map[string]any{evil: map[string]any{}, "tools": evil},
	}})
	r, err := Check(Rev20251125, chronology(out(initReq), in(string(raw))))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Violations) == 0 {
		t.Fatal("no violation found")
	}
	for _, v := range r.Violations {
		for _, s := range []string{v.Pointer, v.Keyword, v.KeywordLocation, v.Message, v.Definition} {
			if strings.Contains(s, "<script>") || strings.Contains(s, "aGk=") {
				t.Errorf("a value of the target reached the violation: %q", s)
			}
			if what, at := termsafe.FirstUnsafe([]byte(s)); at >= 0 {
				t.Errorf("%s at %d in %q", what, at, s)
			}
		}
	}
}

func TestRequirementAppliesToRevision(t *testing.T) {
	p := Problem{Pointer: "/result", Keyword: "required", Message: `missing required member "resultType"`}
	if got := Requirement(Rev20260728, "result", p); got != "RPC-40" {
		t.Errorf("2026-07-28: %s, want RPC-40", got)
	}
	// RPC-40 is a 2026-07-28 rule: a 2025-11-25 run cites the base rule.
	if got := Requirement(Rev20251125, "result", p); got != BaseRule {
		t.Errorf("2025-11-25: %s, want %s", got, BaseRule)
	}
	if !AppliesTo("RPC-2", Rev20251125) || !AppliesTo("RPC-2", Rev20260728) || AppliesTo("RPC-6", Rev20260728) || AppliesTo("NO-1", Rev20251125) {
		t.Error("AppliesTo disagrees with the registry's Ver column")
	}
}

// TestNotJSONOnStdout: over stdio a frame that is not JSON, a banner or a
// blank line, breaks STD-4 under both revisions, each violation naming
// what was written; a frame cut short by the chronology's bound is left
// unchecked.
func TestNotJSONOnStdout(t *testing.T) {
	for _, rev := range []string{Rev20251125, Rev20260728} {
		log := chrono.New()
		log.Frame(chrono.In, "stdout", []byte("Server listening on stdio"), nil, nil)
		log.Frame(chrono.In, "stdout", []byte(""), nil, nil)
		log.Append(chrono.Event{Dir: chrono.In, Channel: "stdout", Kind: chrono.KindFrame, Raw: []byte("{\"jsonrpc\""), Truncated: true,
			Summary: &chrono.Summary{Malformed: "truncated"}})
		r, err := Check(rev, log.Events())
		if err != nil {
			t.Fatal(err)
		}
		want := []brief{{1, "JSONRPCMessage", "", NotJSON, "STD-4"}, {2, "JSONRPCMessage", "", NotJSON, "STD-4"}}
		if diff := cmp.Diff(want, briefs(r.Violations)); diff != "" {
			t.Errorf("%s: violations (-want +got):\n%s", rev, diff)
		}
		if len(r.Violations) == 2 {
			if m := r.Violations[0].Message; !strings.Contains(m, `"Server listening on stdio"`) {
				t.Errorf("%s: message %q does not name the banner", rev, m)
			}
			if m := r.Violations[1].Message; !strings.Contains(m, "a blank line") {
				t.Errorf("%s: message %q does not name the blank line", rev, m)
			}
		}
		if r.Checked != 2 || r.Unchecked != 1 {
			t.Errorf("%s: %d checked, %d unchecked; want 2 and 1", rev, r.Checked, r.Unchecked)
		}
	}
}

// TestTrackerMemoryFollowsWhatIsInFlight: over a long conversation a
// Tracker keeps the requests still unanswered and the latest answered
// ones (keepAnswered), and forgets the rest; a request it still holds is
// judged by its method as before, and a very late answer to one it
// forgot is judged as an answer to an unknown request (the envelope
// alone), not wrongly.
func TestTrackerMemoryFollowsWhatIsInFlight(t *testing.T) {
	s, err := Load(Rev20251125)
	if err != nil {
		t.Fatal(err)
	}
	tr := NewTracker(s)
	feed := func(frames ...frame) []Violation {
		t.Helper()
		var all []Violation
		for _, ev := range chronology(frames...) {
			_, vs := tr.Event(ev)
			all = append(all, vs...)
		}
		return all
	}
	feed(out(`{"jsonrpc":"2.0","id":"open","method":"tools/list"}`))
	const n = 3 * keepAnswered
	for i := range n {
		id := fmt.Sprint(i)
		if vs := feed(out(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`), in(`{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)); len(vs) != 0 {
			t.Fatalf("ping %d: %v", i, vs)
		}
	}
	if len(tr.sent) > keepAnswered+1 || len(tr.answered) > keepAnswered {
		t.Fatalf("after %d answered pings the tracker holds %d sent and %d answered ids; want at most %d", n, len(tr.sent), len(tr.answered), keepAnswered+1)
	}
	// The open request is still known by its method: an empty result is
	// no ListToolsResult.
	if vs := feed(in(`{"jsonrpc":"2.0","id":"open","result":{}}`)); len(vs) != 1 || vs[0].Definition != "ListToolsResult" {
		t.Errorf("the answer to the request still open: %v", briefs(vs))
	}
	// A very late duplicate answer to the first ping, long forgotten: no
	// definition by method, and nothing wrong with its envelope.
	if vs := feed(in(`{"jsonrpc":"2.0","id":0,"result":{}}`)); len(vs) != 0 {
		t.Errorf("a late answer to a forgotten request: %v", briefs(vs))
	}
}
