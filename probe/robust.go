package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/transport"
	"github.com/mcpflight/mcpflight/verdict"
)

// BadInput is one frame that is no JSON-RPC message, as the case sent
// it, and what answered it. Over stdio (and in process) the frame is one
// line of the byte stream, exactly as given plus the newline; over
// Streamable HTTP it is the whole body of a POST of its own, sent with
// the transport's headers and nothing else changed.
type BadInput struct {
	// Seq is the chronology sequence number of the outbound frame, or of
	// the POST's request event.
	Seq uint64
	// Status is the HTTP status of the POST; 0 over stdio.
	Status int
	// Answer is the JSON-RPC message that answered the frame: over HTTP
	// the POST's body when it is one, over stdio a response after Seq
	// whose id is none of the requests the case sent after it. Nil when
	// nothing answered.
	Answer *jsonrpc.Message
	// AnswerSeq is the sequence number of the event that carried Answer
	// (or, over HTTP, the body that was not a JSON-RPC message).
	AnswerSeq uint64
	// Body is an HTTP body that is not a JSON-RPC message, sanitised.
	Body string
}

// SendBad writes raw as one frame: a line over stdio, a POST body over
// HTTP. Over HTTP the answer is known when SendBad returns; over stdio it
// is read from the chronology later (FindBadAnswer), once a barrier has
// shown that the target read what followed.
func (e *Env) SendBad(ctx context.Context, raw []byte) (BadInput, error) {
	if h, ok := e.S.Conn().(*transport.HTTP); ok {
		from := e.Log.Len()
		resp, err := h.RawPOST(ctx, raw, nil)
		if err != nil {
			return BadInput{Seq: from + 1}, err
		}
		bad := BadInput{Seq: from + 1, Status: resp.Status}
		for _, ev := range e.Log.Since(from) {
			if ev.Dir == chrono.Out && ev.Kind == chrono.KindHTTP && bad.Seq == from+1 {
				bad.Seq = ev.Seq
			}
			if ev.Dir == chrono.In && ev.Kind == chrono.KindHTTP && len(ev.Raw) > 0 && bad.AnswerSeq == 0 {
				bad.AnswerSeq = ev.Seq
			}
		}
		body := resp.Body
		if len(resp.Events) > 0 {
			body = []byte(resp.Events[0].Data)
		}
		if len(bytes.TrimSpace(body)) > 0 {
			if m, err := jsonrpc.Decode(body); err == nil {
				bad.Answer = m
			} else {
				bad.Body = chrono.Sanitize(truncateText(string(body), 160), false)
			}
		}
		return bad, nil
	}
	from := e.Log.Len()
	if err := e.S.SendRaw(ctx, raw); err != nil {
		return BadInput{Seq: from + 1}, err
	}
	bad := BadInput{Seq: from + 1}
	for _, ev := range e.Log.Since(from) {
		if ev.Dir == chrono.Out && ev.Kind == chrono.KindFrame && bytes.Equal(ev.Raw, raw) {
			bad.Seq = ev.Seq
			break
		}
	}
	return bad, nil
}

// FindBadAnswer fills in, over stdio, the response that answered bad: the
// first response read after it whose id is none of the requests sent
// after it (a null id, an id never sent, or one already answered).
func (e *Env) FindBadAnswer(bad *BadInput) {
	if bad.Status != 0 || bad.Answer != nil {
		return
	}
	ours := map[string]bool{}
	for _, ev := range e.Log.Since(bad.Seq) {
		if ev.Kind != chrono.KindFrame || ev.Summary == nil {
			continue
		}
		if ev.Dir == chrono.Out && ev.Summary.Kind == jsonrpc.KindRequest.String() {
			ours[ev.Summary.ID] = true
			continue
		}
		if ev.Dir != chrono.In || !AnyResponse(ev) || ours[ev.Summary.ID] {
			continue
		}
		if m, err := ev.Message(); err == nil {
			bad.Answer, bad.AnswerSeq = m, ev.Seq
			return
		}
	}
}

// ErrNotAlive is wrapped by Alive's error when the target did not answer.
var ErrNotAlive = errors.New("the target did not answer")

// Alive sends the revision's liveness request (ping under 2025-11-25,
// server/discover under 2026-07-28, which has no ping) and waits for its
// answer within Env.Patience. An answer of any kind, an error included,
// shows the target still reads and answers; a target that closed its
// output or stayed silent gets an error wrapping ErrNotAlive. It returns
// the sequence number the request was sent at.
func (e *Env) Alive(ctx context.Context) (uint64, error) {
	pctx, cancel := context.WithTimeout(ctx, e.Patience())
	defer cancel()
	seq := e.Log.Len() + 1
	var err error
	if e.Revision == spec.V20260728 {
		_, err = e.S.Discover(pctx)
	} else {
		err = e.S.Ping(pctx)
	}
	var rpcErr *jsonrpc.Error
	if err == nil || errors.As(err, &rpcErr) {
		return seq, nil
	}
	return seq, fmt.Errorf("%w: %w", ErrNotAlive, err)
}

// AliveAfter judges, under rule, whether the target still answers after
// what the case sent (what names it): nil when it does, the outcome that
// fails the case when it stopped answering or closed its output.
func (e *Env) AliveAfter(ctx context.Context, rule verdict.Rule, what string) *verdict.Outcome {
	seq, err := e.Alive(ctx)
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrNotAlive) {
		o := verdict.Errorf("%v", err)
		return &o
	}
	o := e.Broke(rule, []string{"the server keeps answering after " + what},
		"the server stopped answering after "+what+": "+chrono.Sanitize(err.Error(), false), seq)
	return &o
}

// AliveAfterSwallow is AliveAfter for a frame that a server reading a
// stream of JSON values, not of lines, may take for the beginning of a
// value that the next line completes (a truncated object): it sends two
// liveness requests one after the other, and what the second does tells
// at once what a single one would leave to Patience. When the first is
// answered, the server lives. When the connection ends (a decoder that
// took the first line for the rest of the object fails on the second),
// or the second is answered and the first is not within Patience, the
// server broke rule: the valid line after what was swallowed. Nil when
// the server lives. Over Streamable HTTP every frame is a body of its own,
// so nothing can be swallowed, and the two requests' streams are not
// ordered with each other: it is AliveAfter.
func (e *Env) AliveAfterSwallow(ctx context.Context, rule verdict.Rule, what string) *verdict.Outcome {
	if e.SeparateStreams() {
		return e.AliveAfter(ctx, rule, what)
	}
	pctx, cancel := context.WithTimeout(ctx, e.Patience())
	defer cancel()
	method := mcp.MethodPing
	if e.Revision == spec.V20260728 {
		method = mcp.MethodServerDiscover
	}
	want := []string{"the server keeps answering after " + what}
	seq := e.Log.Len() + 1
	first, err := e.S.Start(pctx, method, nil)
	if err != nil {
		return e.notAlive(rule, want, what, seq, err)
	}
	second, err := e.S.Start(pctx, method, nil)
	if err != nil {
		// The connection broke under the second line.
		return e.notAlive(rule, want, what, seq, err)
	}
	answered := func(c *peer.Call) (bool, error) {
		_, err := c.Await(pctx)
		var rpcErr *jsonrpc.Error
		return err == nil || errors.As(err, &rpcErr), err
	}
	select {
	case <-first.Done():
	case <-second.Done():
	case <-pctx.Done():
	}
	if isDone(first) || !isDone(second) {
		// The first has its answer, or failed because the connection
		// ended, or the patience ran out: both must be answered.
		for _, c := range []*peer.Call{first, second} {
			if ok, err := answered(c); !ok {
				return e.notAlive(rule, want, what, seq, err)
			}
		}
		return nil
	}
	if ok, err := answered(second); !ok {
		return e.notAlive(rule, want, what, seq, err)
	}
	// The second was answered, the first not yet: a server may answer out
	// of order (the reference server handles requests side by side, so
	// not even a control round trip orders them), so the first has the
	// patience to come. Only a server that swallowed it waits that long.
	wctx, wcancel := context.WithTimeout(ctx, e.Patience())
	select {
	case <-first.Done():
	case <-wctx.Done():
	}
	wcancel()
	if isDone(first) {
		if ok, err := answered(first); !ok {
			return e.notAlive(rule, want, what, seq, err)
		}
		return nil
	}
	_, secondSeq := second.Response()
	o := e.Broke(rule, want, fmt.Sprintf("the valid request right after %s (%s %s, seq %d) was never answered, while the one after it was (seq %d): the line was taken for the rest of the frame",
		what, method, first.ID, first.SentSeq, secondSeq), first.SentSeq)
	return &o
}

// notAlive is the outcome of a liveness request that failed with err: a
// break of rule when it was not answered, an error otherwise.
func (e *Env) notAlive(rule verdict.Rule, want []string, what string, seq uint64, err error) *verdict.Outcome {
	if err == nil {
		err = errors.New("no answer")
	}
	o := e.Broke(rule, want, "the server stopped answering after "+what+": "+chrono.Sanitize(err.Error(), false), seq)
	return &o
}

// isDone reports whether c has its answer or has failed.
func isDone(c *peer.Call) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// ParamsAnswer is what answered a request sent with a bad parameter.
type ParamsAnswer struct {
	// Seq is the sequence number of the response, 0 when none came.
	Seq uint64
	// Code is the JSON-RPC error code, 0 for a result.
	Code int
	// Result is true when the request got a result, not an error.
	Result bool
	// Err is set when no response came.
	Err error
}

// SendParams sends method with params, which break its required
// parameters (opts apply to the request, e.g. a capability it declares),
// and waits for the answer within Env.Patience.
func (e *Env) SendParams(ctx context.Context, method string, params any, opts ...peer.CallOption) ParamsAnswer {
	pctx, cancel := context.WithTimeout(ctx, e.Patience())
	defer cancel()
	call, err := e.S.Start(pctx, method, params, opts...)
	if err != nil {
		return ParamsAnswer{Err: err}
	}
	resp, err := call.Await(pctx)
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			_, seq := call.Response()
			return ParamsAnswer{Seq: seq, Code: rpcErr.Code}
		}
		return ParamsAnswer{Err: err}
	}
	_, seq := call.Response()
	if resp.Error != nil {
		return ParamsAnswer{Seq: seq, Code: resp.Error.Code}
	}
	return ParamsAnswer{Seq: seq, Result: true}
}

// Describe says what the answer was, for an Actual line.
func (a ParamsAnswer) Describe() string {
	switch {
	case a.Err != nil:
		return "no answer: " + chrono.Sanitize(a.Err.Error(), false)
	case a.Result:
		return fmt.Sprintf("a result (seq %d)", a.Seq)
	}
	return fmt.Sprintf("error %d (seq %d)", a.Code, a.Seq)
}

// IsEmptyResult reports whether m is a result whose value is {}.
func IsEmptyResult(m *jsonrpc.Message) bool {
	if m == nil || m.Kind != jsonrpc.KindResult {
		return false
	}
	var v map[string]json.RawMessage
	return json.Unmarshal(m.Result, &v) == nil && len(v) == 0
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
