package monitor

import (
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// The routing header of the tasks extension's methods over Streamable
// HTTP (TSX-52): a tasks/get, tasks/update or tasks/cancel POST carries
// Mcp-Name with the request's params.taskId (Base64-encoded when it is
// not plain ASCII, HTTP-101). It reads watch's record of the POST's
// head, which comes before the request's frame on the same exchange.

// nameHeader is the Mcp-Name header of a POST's head: its value, and
// whether it was there (headerPresent, headerAbsent, or headerUnknown
// when the record of the head was cut before it).
type nameHeader struct {
	value string
	known int
}

// postHead keeps the Mcp-Name header of a POST's head, for the request
// its body carries (taskNameSent).
func (s *session) postHead(ev chrono.Event) {
	if s.names == nil {
		s.names = newBoundedMap[nameHeader](maxEnded)
	}
	v, known := header(ev.Text, mcp.HeaderName)
	s.names.put(ev.Channel, nameHeader{v, known})
}

// taskMethod reports whether method is one of the extension's whose POST
// names its task in Mcp-Name.
func taskMethod(method string) bool {
	return method == mcp.MethodTasksGet || method == mcp.MethodTasksUpdate || method == mcp.MethodTasksCancel
}

// taskNameSent judges the Mcp-Name header of the POST that carried r, a
// client's 2026-07-28 task method naming taskID: it is the task's ID
// (TSX-52). A POST whose head was not recorded, or was cut before the
// header, is not judged.
func (s *session) taskNameSent(r *request, ev chrono.Event, taskID string) {
	if s.names == nil || !r.modern || !taskMethod(r.method) {
		return
	}
	h, ok := s.names.get(ev.Channel)
	if !ok || h.known == headerUnknown {
		return
	}
	s.exercise(RuleTaskNameHeader, Client)
	if h.known == headerAbsent {
		s.find(RuleTaskNameHeader, Client, verdict.Req("TSX-52"), ev.Seq, false,
			"%s %s (task %s) was POSTed without the %s header: over Streamable HTTP it carries the taskId", r.method, r.id, quote(taskID), mcp.HeaderName)
		return
	}
	if name, err := transport.DecodeHeaderValue(h.value); err != nil || name != taskID {
		s.find(RuleTaskNameHeader, Client, verdict.Req("TSX-52"), ev.Seq, false,
			"%s %s (task %s) was POSTed with %s: %s, not its taskId", r.method, r.id, quote(taskID), mcp.HeaderName, quote(h.value))
	}
}
