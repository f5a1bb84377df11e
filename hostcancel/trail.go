package hostcancel

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// Trail verbs: what the controller kept, sent, received, what verified
// it, and what it decided.
const (
	TrailKept     = "kept"
	TrailSent     = "sent"
	TrailReceived = "received"
	TrailVerified = "verified"
	TrailDecided  = "decided"
	TrailAlert    = "ALERT"
)

// TrailLine is one line of the decision trail.
type TrailLine struct {
	// Offset is the time since the trail's first event.
	Offset time.Duration
	Verb   string
	Text   string
}

// DecisionTrail turns an operation's events into the controller's decision
// trail: what it kept (task, abort), what it sent (each request), what
// it received and what verified it, and what it decided. Every string is
// sanitised.
func DecisionTrail(events []Event, lost int) []TrailLine {
	var out []TrailLine
	var t0 time.Time
	for i := 0; i < len(events); i++ {
		e := events[i]
		if i == 0 {
			t0 = e.Time
		}
		verb, text := trailText(e)
		if verb == "" {
			continue
		}
		// Consecutive polls are one line.
		j := i
		for j+1 < len(events) && e.Name == EventRequest && events[j+1].Name == EventRequest && events[j+1].Method == e.Method {
			j++
		}
		if j > i {
			text = fmt.Sprintf("%s ×%d (requests %s … %s)", e.Method, j-i+1, e.RequestID, events[j].RequestID)
			i = j
		}
		out = append(out, TrailLine{Offset: e.Time.Sub(t0), Verb: verb, Text: chrono.Sanitize(text, false)})
	}
	if lost > 0 {
		out = append(out, TrailLine{Verb: TrailKept, Text: fmt.Sprintf("(%d later events not kept)", lost)})
	}
	return out
}

func trailText(e Event) (string, string) {
	with := func(s, extra string) string {
		if extra == "" {
			return s
		}
		return s + ": " + extra
	}
	switch e.Name {
	case EventRequest:
		return TrailSent, fmt.Sprintf("%s (request %s)", e.Method, e.RequestID)
	case EventTaskCreated:
		return TrailKept, fmt.Sprintf("task %s, status %s (from request %s)", e.TaskID, e.Status, e.RequestID)
	case EventStatus:
		return TrailReceived, fmt.Sprintf("status %s via %s%s", e.Status, e.Reason, requestSuffix(e.RequestID))
	case EventNotification:
		return TrailReceived, fmt.Sprintf("%s: status %s", e.Method, e.Status)
	case EventListen:
		return TrailKept, with("status subscription", e.Detail)
	case EventRequestCancelSignal:
		return TrailReceived, with("local cancel signal", e.Reason)
	case EventLocalAbort:
		return TrailKept, fmt.Sprintf("local abort at %s while %s: %s; nothing sent", e.Time.UTC().Format("15:04:05.000"), orDash(e.Status), e.Reason)
	case EventTaskCancelRequested:
		return TrailDecided, fmt.Sprintf("cancel the task (policy cancel): one tasks/cancel, status before %s", orDash(e.Status))
	case EventTaskCancelResponse:
		return TrailReceived, with("tasks/cancel answer"+requestSuffix(e.RequestID), e.Detail)
	case EventReconcile:
		return TrailKept, with("reconcile", e.Detail)
	case EventWorkerAck:
		return TrailVerified, with("worker acknowledgement "+e.Status, e.Detail)
	case EventTaskCancelVerified:
		return TrailVerified, "task cancellation verified: status " + e.Status
	case EventEffect:
		return TrailVerified, with("effect by "+e.Reason, e.Detail)
	case EventProgress:
		return TrailKept, e.Detail
	case EventAlert:
		return TrailAlert, with(e.Reason, e.Detail)
	case EventAbandoned:
		return TrailDecided, with("abandoned "+e.Detail, e.Reason)
	case EventClassified:
		return TrailDecided, with(e.Reason, e.Detail)
	}
	return "", ""
}

func requestSuffix(id string) string {
	if id == "" {
		return ""
	}
	return " (request " + id + ")"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// FormatTrail renders the trail, one line each, indented by prefix.
func FormatTrail(lines []TrailLine, prefix string) string {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s%8s  %-8s %s\n", prefix, l.Offset.Round(time.Millisecond), l.Verb, l.Text)
	}
	return b.String()
}
