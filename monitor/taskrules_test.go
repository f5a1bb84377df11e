package monitor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// task25 is a 2025-11-25 Task of id T1: its status, createdAt and
// lastUpdatedAt (seconds past 2026-01-01T00:00:00Z) and the members
// extra adds (",\"ttl\":60000" for a whole one).
func task25(status string, created, updated int, extra string) string {
	return fmt.Sprintf(`{"taskId":"T1","status":"%s","createdAt":"2026-01-01T00:00:%02dZ","lastUpdatedAt":"2026-01-01T00:00:%02dZ"%s}`, status, created, updated, extra)
}

const ttl = `,"ttl":60000`

// created25 opens a 2025-11-25 session whose request 1 creates task T1.
func created25(h *history) *history {
	return h.c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"build","task":{"ttl":60000}}}`).
		s(`{"jsonrpc":"2.0","id":1,"result":{"task":` + task25("working", 0, 0, ttl) + `}}`)
}

// get asks tasks/get of T1 as request id; answer is its result.
func (h *history) get(id int, answer string) *history {
	return h.c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":"T1"}}`, id)).
		s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, id, answer))
}

// result asks tasks/result of T1 as request id; answer is the response's
// "result" or "error" member.
func (h *history) result(id int, answer string) *history {
	return h.c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":"T1"}}`, id)).
		s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, answer))
}

// taskStatusOf is notifications/tasks/status of task (a Task object).
func taskStatusOf(task string) string {
	return `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + task + `}`
}

// related is a tasks/result's "result" member for task tid, with isError.
func related(tid string, isError bool) string {
	return fmt.Sprintf(`"result":{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"%s"}},"content":[],"isError":%v}`, tid, isError)
}

// TestTaskRules2025: the task rules of 2025-11-25 that read more than a
// task's status each break on a history that shows the violation, and a
// history of the same shape that conforms, or that the wire cannot
// decide, breaks nothing. (The server's side only: a task left working
// at the end is the host's alert.)
func TestTaskRules2025(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		h    *history
		want []string
	}{
		// TSK-39
		{"lastUpdatedAt before createdAt", init25().c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b","task":{}}}`).
			s(`{"jsonrpc":"2.0","id":1,"result":{"task":` + task25("working", 5, 4, ttl) + `}}`),
			[]string{"task-timestamps TSK-39 fail server"}},
		{"lastUpdatedAt at createdAt", created25(init25()), nil},
		{"lastUpdatedAt goes back in a later answer", created25(init25()).get(2, task25("working", 0, 5, ttl)).get(3, task25("working", 0, 3, ttl)),
			[]string{"task-timestamps TSK-39 fail server"}},
		{"an older notification read after a newer one", created25(init25()).s(taskStatusOf(task25("working", 0, 5, ttl))).s(taskStatusOf(task25("working", 0, 3, ttl))), nil},
		{"an answer to a request sent before the newer sighting was read", created25(init25()).
			c(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"T1"}}`).s(taskStatusOf(task25("working", 0, 5, ttl))).
			s(`{"jsonrpc":"2.0","id":3,"result":` + task25("working", 0, 3, ttl) + `}`), nil},
		// TSK-41
		{"tasks/get without ttl", created25(init25()).get(2, task25("working", 0, 1, "")), []string{"task-get-answer TSK-41 fail server"}},
		{"tasks/get with a null ttl", created25(init25()).get(2, task25("working", 0, 1, `,"ttl":null`)), nil},
		// TSK-51
		{"tasks/get answered about another task", created25(init25()).get(2, strings.Replace(task25("working", 0, 1, ttl), "T1", "T2", 1)),
			[]string{"task-id-source-of-truth TSK-51 fail server"}},
		{"tasks/result answered with another task's result", created25(init25()).result(2, related("T2", false)),
			[]string{"task-id-source-of-truth TSK-51 fail server"}},
		// TSK-55
		{"tasks/result without related-task _meta", created25(init25()).s(taskStatusOf(task25("completed", 0, 1, ttl))).
			result(2, `"result":{"content":[],"isError":false}`), []string{"task-result-related-task TSK-55 fail server"}},
		{"tasks/result with related-task _meta", created25(init25()).s(taskStatusOf(task25("completed", 0, 1, ttl))).result(2, related("T1", false)), nil},
		{"tasks/result answered with the task's error", created25(init25()).s(taskStatusOf(task25("failed", 0, 1, ttl))).
			result(2, `"error":{"code":-32603,"message":"broke"}`), nil},
		// TSK-58
		{"a status notification with related-task _meta", created25(init25()).
			s(taskStatusOf(strings.Replace(task25("completed", 0, 1, ttl), "{", `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"T1"}},`, 1))),
			[]string{"task-status-no-related-task TSK-58 warn server"}},
		{"a status notification without it", created25(init25()).s(taskStatusOf(task25("completed", 0, 1, ttl))), nil},
		// TSK-76
		{"a tool result with isError ends the task completed", created25(init25()).s(taskStatusOf(task25("completed", 0, 1, ttl))).result(2, related("T1", true)),
			[]string{"task-result-fits-status TSK-76 warn server"}},
		{"the same, its result read before its status", created25(init25()).result(2, related("T1", true)).s(taskStatusOf(task25("completed", 0, 1, ttl))),
			[]string{"task-result-fits-status TSK-76 warn server"}},
		{"a tool result with isError ends the task failed", created25(init25()).s(taskStatusOf(task25("failed", 0, 1, ttl))).result(2, related("T1", true)), nil},
		// TSK-77
		{"a failed task's tasks/result answers a result", created25(init25()).s(taskStatusOf(task25("failed", 0, 1, ttl))).result(2, related("T1", false)),
			[]string{"task-result-fits-status TSK-77 fail server"}},
		{"a cancelled task's tasks/result answers a result", created25(init25()).
			c(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"T1"}}`).s(`{"jsonrpc":"2.0","id":3,"result":`+task25("cancelled", 0, 1, ttl)+`}`).
			result(2, related("T1", false)), nil},
		// TSK-47
		{"tasks/result refused, then the task still working", created25(init25()).result(2, `"error":{"code":-32602,"message":"not finished"}`).
			get(3, task25("working", 0, 1, ttl)), []string{"task-result-blocks TSK-47 fail server"}},
		{"tasks/result refused, and a poll sent before the refusal says working", created25(init25()).
			c(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"T1"}}`).c(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"T1"}}`).
			s(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"not finished"}}`).s(`{"jsonrpc":"2.0","id":3,"result":` + task25("working", 0, 1, ttl) + `}`), nil},
		{"tasks/result refused, and the task had failed", created25(init25()).result(2, `"error":{"code":-32602,"message":"bad argument"}`).
			get(3, task25("failed", 0, 1, ttl)), nil},
		// TSK-D1, CAN-4
		{"a task ends cancelled unasked", created25(init25()).s(taskStatusOf(task25("cancelled", 0, 1, ttl))),
			[]string{"task-cancelled-only-when-asked TSK-D1 fail server"}},
		{"a task ends cancelled after notifications/cancelled", created25(init25()).c(cancel("1")).s(taskStatusOf(task25("cancelled", 0, 1, ttl))),
			[]string{"task-cancelled-only-when-asked CAN-4 fail server"}},
		{"a task ends cancelled after tasks/cancel", created25(init25()).
			c(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"T1"}}`).s(taskStatusOf(task25("cancelled", 0, 1, ttl))).
			s(`{"jsonrpc":"2.0","id":3,"result":` + task25("cancelled", 0, 1, ttl) + `}`), nil},
		{"a task whose request was cancelled before its CreateTaskResult", init25().c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b","task":{}}}`).
			c(cancel("1")).wait(ms).s(`{"jsonrpc":"2.0","id":1,"result":{"task":` + task25("working", 0, 0, ttl) + `}}`).s(taskStatusOf(task25("cancelled", 0, 1, ttl))), nil},
		{"a task ends completed", created25(init25()).s(taskStatusOf(task25("completed", 0, 1, ttl))), nil},
		// 2026-07-28's rules do not hold: a CreateTaskResult of the
		// extension answering a call that declared nothing is TSX-2's
		// there; here the call asked for no task and the answer is not
		// read as one.
		{"an extension's task for a plain call", init25().c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w"}}`).
			s(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"T1","status":"working"}}`), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Sides: []Side{Server}})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), fs)
			}
		})
	}
}

// TestTaskCancelledOverHTTP: over Streamable HTTP another session may
// have cancelled the task, so a task ending cancelled with no tasks/cancel
// in this one is not judged.
func TestTaskCancelledOverHTTP(t *testing.T) {
	h := init25().post(1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b","task":{}}}`).
		sse(1, `{"jsonrpc":"2.0","id":1,"result":{"task":`+task25("working", 0, 0, ttl)+`}}`).
		frame(chrono.In, "SSE GET #1", taskStatusOf(task25("cancelled", 0, 1, ttl)))
	if fs, _, _ := run(h, Options{Transport: "http", Sides: []Side{Server}}); len(fs) != 0 {
		t.Errorf("findings %v", brief(fs))
	}
}

// meta2026Tasks is a 2026-07-28 request's _meta declaring the tasks
// extension; meta2026Plain declares nothing.
const (
	meta2026Tasks = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	meta2026Plain = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
)

// task2026 is an extension Task of id T1 (with ttlMs 60000), its status and
// the members extra adds.
func task2026(status, extra string) string {
	return `"taskId":"T1","status":"` + status + `","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:01Z","ttlMs":60000` + extra
}

// created2026 is a 2026-07-28 tools/call, request 1 with _meta meta,
// answered with task T1.
func created2026(meta string) *history {
	return (&history{}).c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w",` + meta + `}}`).
		s(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"task",` + task2026("working", "") + `}}`)
}

// get2026 asks tasks/get of T1 as request id; answer is the response's
// "result" or "error" member.
func (h *history) get2026(id int, answer string) *history {
	return h.c(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{%s,"taskId":"T1"}}`, id, meta2026Tasks)).
		s(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, answer))
}

// TestTaskRules2026: the tasks extension's rules each break on a history
// that shows the violation, a history of the same shape that conforms
// breaks nothing, and a rule the extension reverses (isError ends a task
// completed; a terminal task's tasks/cancel is acknowledged) holds the
// other way round from 2025-11-25.
func TestTaskRules2026(t *testing.T) {
	notFound := `"error":{"code":-32602,"message":"Task not found"}`
	got := func(status, extra string) string {
		return `"result":{"resultType":"complete",` + task2026(status, extra) + `}`
	}
	for _, tc := range []struct {
		name string
		h    *history
		want []string
	}{
		// TSX-2
		{"a task for a request that did not declare the extension", created2026(meta2026Plain), []string{"task-only-when-declared TSX-2 fail server"}},
		{"a task for a request that declared it", created2026(meta2026Tasks), nil},
		{"a plain result for a request that did not declare it", (&history{}).c(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w",` + meta2026Plain + `}}`).
			s(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"a task done"}]}}`), nil},
		// TSX-56
		{"tasks/get served to a request that did not declare the extension", created2026(meta2026Tasks).
			c(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{` + meta2026Plain + `,"taskId":"T1"}}`).s(`{"jsonrpc":"2.0","id":2,` + got("working", "") + `}`),
			[]string{"task-only-when-declared TSX-56 fail server"}},
		{"tasks/cancel served to a request that did not declare the extension", created2026(meta2026Tasks).
			c(`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{` + meta2026Plain + `,"taskId":"T1"}}`).s(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete"}}`),
			[]string{"task-only-when-declared TSX-56 fail server"}},
		{"tasks/get refused to a request that did not declare the extension", created2026(meta2026Tasks).
			c(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{` + meta2026Plain + `,"taskId":"T1"}}`).
			s(`{"jsonrpc":"2.0","id":2,"error":{"code":-32021,"message":"declare the tasks extension","data":{"requiredCapabilities":{}}}}`), nil},
		// TSX-16
		{"a created task not found", created2026(meta2026Tasks).get2026(2, notFound), []string{"task-durable-when-created TSX-16 fail server"}},
		{"a created task found", created2026(meta2026Tasks).get2026(2, got("working", "")), nil},
		{"a task found, then gone", created2026(meta2026Tasks).get2026(2, got("working", "")).get2026(3, notFound), nil},
		{"a task not found once its ttl ran out", created2026(meta2026Tasks).wait(61*time.Second).get2026(2, notFound), nil},
		// TSX-30, TSX-27, TSX-29
		{"tasks/get answers resultType task", created2026(meta2026Tasks).get2026(2, strings.Replace(got("working", ""), "complete", "task", 1)),
			[]string{"task-get-answer TSX-30 fail server"}},
		{"a completed task without its result", created2026(meta2026Tasks).get2026(2, got("completed", "")), []string{"task-get-answer TSX-27 fail server"}},
		{"a failed task without its error", created2026(meta2026Tasks).get2026(2, got("failed", "")), []string{"task-get-answer TSX-29 fail server"}},
		{"a completed task with its result, a failed one with its error", created2026(meta2026Tasks).get2026(2, got("completed", `,"result":{"content":[]}`)).
			get2026(3, got("completed", `,"result":{"content":[]}`)), nil},
		{"a failed task with its error", created2026(meta2026Tasks).get2026(2, got("failed", `,"error":{"code":-32603,"message":"broke"}`)), nil},
		// TSX-14..61: a tool result with isError completes the task.
		{"isError completes the task (the extension)", created2026(meta2026Tasks).get2026(2, got("completed", `,"result":{"content":[],"isError":true}`)), nil},
		// TSX-44
		{"tasks/cancel of a terminal task refused", created2026(meta2026Tasks).get2026(2, got("cancelled", "")).
			c(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{` + meta2026Tasks + `,"taskId":"T1"}}`).
			s(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"already cancelled"}}`),
			[]string{"task-cancel-terminal TSX-44 fail server"}},
		{"tasks/cancel of a terminal task acknowledged", created2026(meta2026Tasks).get2026(2, got("cancelled", "")).
			c(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{` + meta2026Tasks + `,"taskId":"T1"}}`).
			s(`{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete"}}`), nil},
		// TSX-15
		{"a terminal task comes back", created2026(meta2026Tasks).get2026(2, got("completed", `,"result":{}`)).get2026(3, got("working", "")),
			[]string{"task-terminal-stable TSX-15 fail server"}},
		// 2025-11-25's rules do not hold: no ttl member (ttlMs instead),
		// no related-task _meta on tasks/result.
		{"a 2026-07-28 task has no ttl", created2026(meta2026Tasks).get2026(2, got("working", "")).get2026(3, got("working", "")), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Sides: []Side{Server}})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s\n(%v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), fs)
			}
		})
	}
}

// TestReversedRules: the same behaviour breaks one revision's rule and
// holds under the other's: a completed task whose tool result has isError
// (TSK-76 under 2025-11-25; TSX-59 under 2026-07-28), and a completed
// task's tasks/cancel refused with -32602 (TSK-63 under 2025-11-25;
// TSX-44 breaks under 2026-07-28).
func TestReversedRules(t *testing.T) {
	cancel25 := `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"T1"}}`
	cancel2026 := `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{` + meta2026Tasks + `,"taskId":"T1"}}`
	refused := `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"already completed"}}`
	completed2026 := `"result":{"resultType":"complete",` + task2026("completed", `,"result":{"content":[],"isError":true}`) + `}`
	for _, tc := range []struct {
		name string
		h    *history
		want string
	}{
		{"isError, completed, 2025-11-25", created25(init25()).s(taskStatusOf(task25("completed", 0, 1, ttl))).result(2, related("T1", true)), "task-result-fits-status TSK-76 warn server"},
		{"isError, completed, 2026-07-28", created2026(meta2026Tasks).get2026(2, completed2026), ""},
		{"a completed task's cancel refused, 2025-11-25", created25(init25()).get(2, task25("completed", 0, 1, ttl)).c(cancel25).s(refused), ""},
		{"a completed task's cancel refused, 2026-07-28", created2026(meta2026Tasks).get2026(2, completed2026).c(cancel2026).s(refused), "task-cancel-terminal TSX-44 fail server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Sides: []Side{Server}})
			if got := strings.Join(brief(fs), ","); got != tc.want {
				t.Errorf("findings %q, want %q (%v)", got, tc.want, fs)
			}
		})
	}
}
