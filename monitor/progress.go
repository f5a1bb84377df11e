package monitor

import (
	"encoding/json"
	"slices"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// progress judges a progress notification side sent about a request of
// the other side: its token is one an active request gave (PRG-7), its
// value increases (PRG-4), it comes before the request's response
// (PRG-14; a task's, before the task is terminal, PRG-11, lateProgress),
// and not after the request's cancel beyond the crossing window (CAN-8,
// CAN-54).
func (s *session) progress(side Side, ev chrono.Event, m *jsonrpc.Message) {
	s.m.counts[CountProgress]++
	var p struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress json.RawMessage `json:"progress"`
		Total    *float64        `json:"total"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return // the schema check's
	}
	tok, err := jsonrpc.ParseToken(p.Token)
	if err != nil {
		return // PRG-1, the schema check's
	}
	var value float64
	if json.Unmarshal(p.Progress, &value) != nil {
		return // not a number: the schema check's
	}
	asker := other(side)
	s.exercise(RuleTokenKnown, side)
	r := s.activeToken(asker, tok)
	if r == nil {
		s.lateProgress(side, asker, ev, tok, value)
		return
	}
	s.exercise(RuleProgressIncreasing, side)
	// Judged in the order one stream carried it: across two HTTP
	// streams the order read is not the order written.
	stream := ""
	if s.http() {
		stream = streamOf(ev.Channel)
	}
	if prev, ok := r.lastOn[stream]; ok && value <= prev {
		s.find(RuleProgressIncreasing, side, verdict.Req("PRG-4"), ev.Seq, false,
			"progress %v for token %s after %v (request %s)", value, tok, prev, r.id)
	}
	if r.lastOn == nil {
		r.lastOn = map[string]float64{}
	}
	r.lastOn[stream] = value
	r.progress++
	r.last, r.lastAt = value, ev.Offset
	if p.Total != nil {
		r.total = *p.Total
	}
	if r.cancelSeq > 0 {
		s.afterCancel(RuleCancelNoProgress, side, r, ev, "progress")
	}
}

// lateProgress judges progress whose token no active request gave: one
// for a task already terminal (PRG-11), one for a request already answered
// (PRG-14, whether or not it had been cancelled: the response completed
// it), one for a cancelled request read on another stream than its
// response (after the cancel), or one no request of the session gave
// (PRG-7). Over stdio, and over HTTP on one stream, the order read is the
// order written; across two HTTP streams it is not, and nothing is judged
// by it.
func (s *session) lateProgress(side, asker Side, ev chrono.Event, tok jsonrpc.ProgressToken, value float64) {
	key := tok.Key()
	for _, r := range slices.Backward(s.ended[asker]) {
		if r.token == nil || r.tokenKey != key {
			continue
		}
		if r.created != "" && !s.is2026() {
			s.taskProgressAfterEnd(side, r, ev, tok, value)
			return
		}
		if !r.responded {
			// Retired after its cancel (retireCancelled).
			s.afterCancel(RuleCancelNoProgress, side, r, ev, "progress")
			return
		}
		if !s.http() || sameStream(r.respChan, ev.Channel) {
			s.exercise(RuleProgressAfterEnd, side)
			s.find(RuleProgressAfterEnd, side, verdict.Req("PRG-14"), ev.Seq, false,
				"progress %v for token %s after the response to request %s at #%d", value, tok, r.id, r.respSeq)
			return
		}
		if r.cancelSeq > 0 {
			s.afterCancel(RuleCancelNoProgress, side, r, ev, "progress")
		}
		return // on another stream: which was written first cannot be told
	}
	if s.forgottenTokens.has(key) {
		s.m.counts[CountForgotten]++ // a request's too old to judge (keepEnded)
		return
	}
	s.find(RuleTokenKnown, side, verdict.Req("PRG-7"), ev.Seq, false,
		"progress %v for token %s, which no active request of the %s gave", value, tok, asker)
}

// taskProgressAfterEnd judges progress under the token of request r,
// which created a task that is terminal (a task's progress may follow its
// CreateTaskResult, PRG-9, until then): PRG-11, when it was read on the
// stream that showed the task terminal (over stdio, the one stream).
func (s *session) taskProgressAfterEnd(side Side, r *request, ev chrono.Event, tok jsonrpc.ProgressToken, value float64) {
	t := s.tasks[r.created]
	if t == nil || t.terminal == "" || s.http() && !sameStream(t.terminalChan, ev.Channel) {
		return // forgotten, or read on another stream
	}
	s.exercise(RuleProgressAfterEnd, side)
	s.find(RuleProgressAfterEnd, side, verdict.Req("PRG-11").Under(spec.V20260728, "PRG-14"), ev.Seq, false,
		"progress %v for token %s after task %s became %s at #%d", value, tok, quote(t.id), t.terminal, t.terminalSeq)
}

// sameStream reports whether two channels of an HTTP exchange are one
// stream ("POST #3" and "SSE POST #3").
func sameStream(a, b string) bool { return streamOf(a) == streamOf(b) }

// streamOf is the HTTP exchange a channel belongs to: "POST #3" for
// "SSE POST #3".
func streamOf(c string) string {
	if len(c) > 4 && c[:4] == "SSE " {
		return c[4:]
	}
	return c
}
