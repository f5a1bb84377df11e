package monitor

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
	"github.com/mcpflight/mcpflight/wireschema"
)

// Bounds of what a session remembers past what is in flight.
const (
	// maxEnded is how many answered requests per side a session keeps,
	// for a late response, late progress or a late cancel to name.
	maxEnded = 256
	// maxUsedIDs bounds the request IDs per side a session keeps for
	// RPC-6 (2025-11-25: an ID is never reused within the session); past
	// it, the oldest are forgotten, and a reuse of one goes unseen.
	maxUsedIDs = 1 << 16
	// maxTasks bounds the tasks a session follows; a terminal one is
	// forgotten first.
	maxTasks = 1024
	// maxOpen bounds the requests per side a session holds open. Past
	// it, the oldest request that was cancelled, and whose crossing
	// window has passed with no answer, is retired: a receiver need not
	// answer a cancelled request, so a host that cancels often would
	// otherwise leave them open for the rest of the session.
	maxOpen = 4096
)

// request is one request in flight, or recently answered.
type request struct {
	side    Side // who sent it
	id      jsonrpc.ID
	method  string
	seq     uint64
	at      time.Duration
	channel string
	token   *jsonrpc.ProgressToken
	// tokenKey is token's Key, computed once.
	tokenKey string
	// taskAug: the request carried params.task; created is the task its
	// CreateTaskResult named.
	taskAug bool
	created string
	// logLevel is the request's _meta log level (2026-07-28), "" for none.
	logLevel string
	// declared: the request declared the tasks extension in its
	// clientCapabilities (2026-07-28).
	declared bool
	// sub is the subscription a subscriptions/listen opened (2026-07-28).
	sub *subscription
	// taskID is what a tasks/* request names.
	taskID string
	// modern: the request's envelope names 2026-07-28; unlisted is the
	// version it names when the server's server/discover did not list it,
	// discoverVersion the version a server/discover names (eras.go).
	modern          bool
	unlisted        string
	discoverVersion string
	// tool is the tool a tools/call without a task names, kept only when
	// the server listed it as requiring a task (TSK-12).
	tool string
	// dups counts the requests of the same sender that reused this one's
	// ID while it was in flight: each may take one of the responses.
	dups int
	// progress: how many came, the last value, and the total the last
	// one gave (0: none).
	progress int
	last     float64
	total    float64
	// lastAt is when the last progress came; lastOn is the last value
	// each stream carried ("" over stdio), which PRG-4 compares.
	lastAt time.Duration
	lastOn map[string]float64
	// errMsg is an error response's message.
	errMsg string
	// The first cancel: its sequence number and time, and whether it was
	// the closing of the response stream.
	cancelSeq uint64
	cancelAt  time.Duration
	closed    bool
	// dropped: the client closed the stream under 2025-11-25 (a
	// disconnection), at droppedAt; resumed once it resumed it.
	dropped   bool
	droppedAt time.Duration
	resumed   bool
	// The response.
	responded bool
	respSeq   uint64
	respAt    time.Duration
	respChan  string
	// status is the HTTP status the request's POST was answered with (0:
	// none seen, or not over HTTP).
	status  int
	errCode int
	isError bool
}

// task is one task the session follows (2025-11-25 tasks).
type task struct {
	id       string
	create   *request
	status   string
	terminal string
	// terminalSeq and terminalChan are where it was first seen terminal.
	terminalSeq  uint64
	terminalChan string
	// statusSeq is where status was last seen, statusAt when.
	statusSeq uint64
	statusAt  time.Duration
	// cancelAck is the successful tasks/cancel answer, cancelAckAt when;
	// cancelAsked is set once tasks/cancel was sent.
	cancelAsked bool
	cancelAck   uint64
	cancelAckAt time.Duration
	// abortSeq is the client's cancel of a request about the task (the
	// creating tools/call, a poll), abortAt when: the host's local abort.
	abortSeq uint64
	abortAt  time.Duration
	abortReq string
	polls    []string
	// alerted is set once an alert was made about the task.
	alerted bool
	// first is the first terminal sighting, latest the latest sighting of
	// each status, in the order of later (stable).
	first  *sighting
	latest map[string]sighting
	// evidence is what the task rules keep of it (taskrules.go).
	evidence taskEvidence
}

// terminalStatuses are the task statuses no other may follow.
var terminalStatuses = []string{"completed", "failed", "cancelled"}

func isTerminal(status string) bool { return slices.Contains(terminalStatuses, status) }

// session is the monitor's view of one session.
type session struct {
	// foundRules are the side and rule pairs this session made findings
	// of (Monitor.keep counts the sessions of a rule by it).
	foundRules map[sideRule]bool
	m          *Monitor
	key        string
	rev        string
	// touched is the Monitor's tick at the session's last event.
	touched uint64
	// initRev is the revision of an initialize in flight.
	initSeen bool
	// reqs are the requests in flight, by side and ID key; ended the
	// recently answered ones, oldest first.
	reqs map[Side]map[string]*request
	// byToken indexes the requests in flight that gave a progress token,
	// by side and token key, in the order they were sent.
	byToken map[Side]map[string][]*request
	ended   map[Side][]*request
	used    map[Side]*boundedSet
	// unreadable is the seq of the last frame of side whose ID could not
	// be read (0: none): a null-id error may answer it (RPC-11), and an
	// error with an ID never sent may be a wrong answer to it.
	// malformedIDs are the IDs of side's malformed frames that could be
	// read, which an error may answer.
	unreadable   map[Side]uint64
	malformedIDs map[Side]*boundedSet
	// streams maps an HTTP exchange's channel ("POST #3") to its request,
	// while the request is open and for the latest maxEnded answered ones
	// (answeredPosts, oldest first), whose streams may still carry late
	// events; notifPosts are the channels of the POSTs that carried a
	// notification, refusedPosts those of them the server answered with
	// a status that is not 2xx.
	streams       map[string]*request
	answeredPosts []*request
	// forgottenTokens are the progress tokens of the ended requests
	// keepEnded forgot, so that late progress under one is not taken for
	// progress under a token never given.
	forgottenTokens *boundedSet
	notifPosts      *boundedSet
	refusedPosts    *boundedSet
	// notified is set once side sent a notification; nullErrors are the
	// errors with a null id waiting for the requests then in flight to
	// be answered (nullIDError).
	notified   map[Side]bool
	nullErrors []*nullError
	// aborts counts the tasks whose host stopped waiting for them, drops
	// the requests whose stream the client dropped: while none, the
	// silence has nothing to judge (advance).
	aborts, drops int
	tasks         map[string]*task
	// cancelled are the open requests with a cancel, in the order
	// cancelled, which retireCancelled takes from once a side holds
	// maxOpen requests open.
	cancelled []*request
	// listens counts the subscriptions in flight: while none, no
	// notification is read for them.
	listens int
	// logLevel is the level the client set with logging/setLevel
	// (2025-11-25), "" when none; setLevel is the request setting it.
	logLevel string
	setLevel map[string]string
	schema   *wireschema.Tracker
	// unschemed are the frames seen before the revision was known (the
	// initialize request whose result tells it), at most maxUnschemed,
	// which the schema tracker reads first once it starts: it needs a
	// request to know its result's definition.
	unschemed []chrono.Event
	now       time.Duration
	// rtts are the latest round trips of prompt requests (initialize,
	// ping, tools/list, …), which size the crossing window.
	rtts []time.Duration
	// pending are findings made before the session's revision was known.
	pending []pendingFinding
	// hs is what the Streamable HTTP rules keep (http.go).
	hs *httpStreams
	// hand is what the handshake's rules keep (lifecycle.go), era what
	// the version rules keep (eras.go), names the Mcp-Name header of the
	// latest POST heads, by exchange (headers.go; nil until one came).
	hand  handshake
	era   era
	names *boundedMap[nameHeader]
}

// pendingFinding is a finding waiting for its session's revision.
type pendingFinding struct {
	rule    string
	side    Side
	r       verdict.Rule
	seq     uint64
	absence bool
	text    string
}

func newSession(m *Monitor, key string) *session {
	s := &session{m: m, key: key, rev: m.opts.Revision,
		reqs:       map[Side]map[string]*request{Client: {}, Server: {}},
		byToken:    map[Side]map[string][]*request{Client: {}, Server: {}},
		ended:      map[Side][]*request{},
		used:       map[Side]*boundedSet{Client: newBoundedSet(maxUsedIDs), Server: newBoundedSet(maxUsedIDs)},
		unreadable: map[Side]uint64{}, malformedIDs: map[Side]*boundedSet{Client: newBoundedSet(maxEnded), Server: newBoundedSet(maxEnded)},
		streams: map[string]*request{}, forgottenTokens: newBoundedSet(maxUsedIDs), notifPosts: newBoundedSet(maxEnded), refusedPosts: newBoundedSet(maxEnded), notified: map[Side]bool{},
		tasks: map[string]*task{}, setLevel: map[string]string{}}
	s.loadSchema()
	return s
}

// loadSchema starts the schema tracker for the session's revision, once
// it is known.
func (s *session) loadSchema() {
	if !s.m.opts.Schema || s.rev == "" || s.schema != nil {
		return
	}
	if sc, err := wireschema.Load(s.rev); err == nil {
		s.schema = wireschema.NewTracker(sc)
		s.m.schema.Revision = s.rev
		for _, ev := range s.unschemed {
			s.checkSchema(ev)
		}
	}
	s.unschemed = nil
}

// maxUnschemed bounds the frames kept for the schema check until the
// revision is known.
const maxUnschemed = 64

// checkSchema validates a frame against the revision's schema, or keeps
// it for when the schema is known.
func (s *session) checkSchema(ev chrono.Event) {
	switch {
	case !s.m.opts.Schema || !s.m.judges(Server):
	case s.schema != nil:
		checked, vs := s.schema.Event(ev)
		s.m.schemaCheck(s.key, ev, checked, vs)
	case s.rev == "" && len(s.unschemed) < maxUnschemed:
		s.unschemed = append(s.unschemed, ev)
	}
}

// revision is the session's revision: learned, else the fallback.
func (s *session) revision() string {
	if s.rev != "" {
		return s.rev
	}
	return s.m.opts.Fallback
}

// learn sets the session's revision, once, and judges the findings that
// waited for it.
func (s *session) learn(rev string) {
	if s.rev != "" || rev == "" {
		return
	}
	s.rev = rev
	s.m.spoken[rev] = true
	s.loadSchema()
	pending := s.pending
	s.pending = nil
	for _, p := range pending {
		s.report(p.rule, p.side, p.r, p.seq, p.absence, "%s", p.text)
	}
}

// find records a finding, or keeps it until the revision is known.
func (s *session) find(ruleID string, side Side, r verdict.Rule, seq uint64, absence bool, format string, args ...any) {
	if s.rev == "" {
		s.pending = append(s.pending, pendingFinding{rule: ruleID, side: side, r: r, seq: seq, absence: absence, text: fmt.Sprintf(format, args...)})
		return
	}
	s.report(ruleID, side, r, seq, absence, format, args...)
}

// is2026 reports whether the session speaks 2026-07-28 (as far as known).
func (s *session) is2026() bool { return s.revision() == spec.V20260728 }

// http reports whether the conversation is over Streamable HTTP.
func (s *session) http() bool { return s.m.opts.Transport == "http" }

func (s *session) event(ev chrono.Event) {
	if s.http() && s.httpEvent(ev) {
		return // a copy of a message replayed on a resumed stream (http.go)
	}
	switch {
	case ev.Kind == chrono.KindFrame && (ev.Dir == chrono.In || ev.Dir == chrono.Out):
		s.frame(ev)
		s.checkSchema(ev)
	case ev.Dir == chrono.Harness && ev.Kind == chrono.KindNote && strings.HasPrefix(ev.Channel, "SSE POST #"):
		s.streamEnded(ev)
	case ev.Dir == chrono.Harness && ev.Channel == chrono.ChannelObserver:
		s.observerNote(ev)
	case ev.Dir == chrono.Harness && strings.HasPrefix(ev.Text, chrono.TextStreamClosed):
		s.streamClosed(ev)
	case ev.Kind == chrono.KindHTTP && ev.Dir == chrono.Out && strings.HasPrefix(ev.Channel, "GET #"):
		s.resumed(ev)
	case ev.Kind == chrono.KindHTTP && ev.Dir == chrono.Out && strings.HasPrefix(ev.Channel, "POST #"):
		s.postHead(ev)
	case ev.Kind == chrono.KindHTTP && ev.Dir == chrono.In && strings.HasPrefix(ev.Text, "HTTP "):
		var status int
		_, _ = fmt.Sscanf(ev.Text, "HTTP %d", &status)
		if r := s.streams[ev.Channel]; r != nil {
			r.status = status
		} else if status/100 != 2 && s.notifPosts.has(ev.Channel) {
			s.refusedPosts.add(ev.Channel)
		}
	}
}

// frame judges one JSON-RPC frame.
func (s *session) frame(ev chrono.Event) {
	side := sideOf(ev.Dir)
	if ev.Summary == nil {
		return // past the chronology's cap: counted, not kept
	}
	if ev.Summary.Malformed != "" {
		s.malformed(side, ev)
		return
	}
	if ev.Truncated {
		// A frame cut short: its body cannot be read, but a response a
		// recorder summarised whole (watch reads the top-level members of
		// a frame too large to keep) still ends its request, so that a
		// large tool result is not left open.
		if k := ev.Summary.Kind; k == "result" || k == "error" {
			if head := summarized(ev); head != nil {
				s.response(side, ev, head)
			}
		}
		return
	}
	head := summarized(ev)
	if head == nil {
		return
	}
	switch head.Kind {
	case jsonrpc.KindRequest:
		var p requestParams
		if s.paramsRead(head.Method, ev.Summary) {
			// Read into a value of its own, so that p, which most
			// requests leave empty, stays off the heap.
			read := new(requestParams)
			_ = json.Unmarshal(ev.Raw, &struct {
				Params *requestParams `json:"params"`
			}{read})
			p = *read
		}
		s.request(side, ev, head, p)
	case jsonrpc.KindNotification:
		switch {
		case notificationRead(head.Method) || s.listens > 0:
			_ = json.Unmarshal(ev.Raw, &struct {
				Params *json.RawMessage `json:"params"`
			}{&head.Params})
			s.notification(side, ev, head)
		default:
			s.notification(side, ev, head) // no rule reads its params
		}
	case jsonrpc.KindResult, jsonrpc.KindError:
		s.response(side, ev, head)
	}
}

// summarized is the head of a frame the chronology summarized as a
// message: its kind, method and ID, without its params, result or error,
// which decoded reads for the rules that need them (the recorder decoded
// and validated the frame when it summarized it). Nil when the summary
// does not give them: the frame is then decoded.
func summarized(ev chrono.Event) *jsonrpc.Message {
	sum := ev.Summary
	kind, ok := jsonrpc.ParseKind(sum.Kind)
	if !ok {
		return decoded(ev)
	}
	m := &jsonrpc.Message{Kind: kind, Method: sum.Method, Raw: ev.Raw}
	switch sum.ID {
	case "":
	case "null":
		m.NullID = true
	default:
		id, err := jsonrpc.ParseID(json.RawMessage(sum.ID))
		if err != nil {
			return decoded(ev) // an ID whose summary is not JSON
		}
		m.ID = id
	}
	return m
}

// decoded is the frame decoded in full, nil when it is no message.
func decoded(ev chrono.Event) *jsonrpc.Message {
	m, err := ev.Message()
	if err != nil {
		return nil
	}
	return m
}

// malformed judges a frame that is no JSON-RPC message: over stdio the
// server's stdout (STD-4) or the client's writes to its stdin (STD-5),
// over HTTP the base rule (a notification's POST answered with a body,
// HTTP-11).
func (s *session) malformed(side Side, ev chrono.Event) {
	s.exercise(RuleWellFormed, side)
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(ev.Raw, &probe) == nil && probe.ID != nil {
		if id, err := jsonrpc.ParseID(probe.ID); err == nil {
			s.malformedIDs[side].add(id.Key()) // an error may answer it by its ID
		} else {
			s.unreadable[side] = ev.Seq
		}
	} else {
		s.unreadable[side] = ev.Seq
	}
	what := quote(string(ev.Raw))
	if what == "" {
		what = "a blank line"
	} else {
		what = fmt.Sprintf("%q", what)
	}
	switch {
	case s.http() && side == Server && s.streams[ev.Channel] == nil && strings.HasPrefix(ev.Channel, "POST #"):
		s.find(RuleWellFormed, side, verdict.Req("HTTP-11").Under(spec.V20260728, "HTTP-86"), ev.Seq, false, "the POST of a notification was answered with a body that is not a message (%s): %s", ev.Summary.Malformed, what)
	case s.http():
		s.find(RuleWellFormed, side, verdict.Req("RPC-2"), ev.Seq, false, "the %s sent a frame that is not a JSON-RPC message (%s): %s", side, ev.Summary.Malformed, what)
	case side == Server:
		s.find(RuleWellFormed, side, verdict.Req("STD-4"), ev.Seq, false, "the server wrote a line on stdout that is not a JSON-RPC message (%s): %s", ev.Summary.Malformed, what)
	default:
		s.find(RuleWellFormed, side, verdict.Req("STD-5"), ev.Seq, false, "the client wrote a line on the server's stdin that is not a JSON-RPC message (%s): %s", ev.Summary.Malformed, what)
	}
}

// requestParams are the members of a request's params the rules read.
type requestParams struct {
	Meta struct {
		Token           json.RawMessage `json:"progressToken"`
		ProtocolVersion string          `json:"io.modelcontextprotocol/protocolVersion"`
		LogLevel        string          `json:"io.modelcontextprotocol/logLevel"`
		// Capabilities is nil when the envelope has none (or null).
		Capabilities *struct {
			Extensions struct {
				Tasks declaration `json:"io.modelcontextprotocol/tasks"`
			} `json:"extensions"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	} `json:"_meta"`
	// Name is a tools/call's tool.
	Name   string          `json:"name"`
	Task   json.RawMessage `json:"task"`
	TaskID string          `json:"taskId"`
	Level  string          `json:"level"`
	// Notifications is a subscriptions/listen's filter.
	Notifications json.RawMessage `json:"notifications"`
}

// paramsRead reports whether a rule reads a request's params: those of
// the methods whose params say something (tools/call's task, tasks/*'s
// taskId, logging/setLevel's level), any with a progress token, and every
// request while the session's revision is unknown (its _meta may say it)
// or is 2026-07-28 (its _meta's log level). Others (a ping, the control
// extension's requests under 2025-11-25) are judged by their head alone.
func (s *session) paramsRead(method string, sum *chrono.Summary) bool {
	switch {
	case s.rev == "" || s.is2026() || sum.Token != "":
		return true
	}
	switch method {
	case mcp.MethodToolsCall, mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel, mcp.MethodLoggingSetLevel:
		return true
	}
	return false
}

// request judges and records a request side sent.
func (s *session) request(side Side, ev chrono.Event, m *jsonrpc.Message, p requestParams) {
	s.m.counts[CountRequests]++
	if side == Client && p.Meta.ProtocolVersion == spec.V20260728 {
		s.learn(spec.V20260728)
	}
	if side == Client && m.Method == mcp.MethodInitialize {
		s.initSeen = true
	}
	if side == Server && s.is2026() {
		// Over stdio the stdio page's own MUST NOT says it (STD-43).
		rule, words := verdict.Req("RPC-61"), "servers initiate no JSON-RPC request"
		if !s.http() {
			rule, words = verdict.Req("STD-43"), "a server writes no JSON-RPC request to stdout"
		}
		s.exercise(RuleOneResponse, side)
		s.find(RuleOneResponse, side, rule, ev.Seq, false, "the server sent request %s (%s): under 2026-07-28 %s", m.ID, quote(m.Method), words)
	}
	key := m.ID.Key()
	s.exercise(RuleIDUnique, side)
	if prev := s.reqs[side][key]; prev != nil {
		s.find(RuleIDUnique, side, verdict.Req("RPC-6").Under(spec.V20260728, "RPC-7"), ev.Seq, false,
			"request %s (%s) reuses the ID of request %s (%s, sent at #%d), still in flight", m.ID, quote(m.Method), prev.id, quote(prev.method), prev.seq)
		// Which of the two a response answers cannot be told: the first
		// stands for both, and takes one more response.
		prev.dups++
		return
	} else if !s.is2026() && s.used[side].has(key) {
		s.find(RuleIDUnique, side, verdict.Req("RPC-6"), ev.Seq, false,
			"request %s (%s) reuses an ID the %s already used in this session", m.ID, quote(m.Method), side)
	}
	s.used[side].add(key)
	r := &request{side: side, id: m.ID, method: m.Method, seq: ev.Seq, at: ev.Offset, channel: ev.Channel,
		taskAug: len(p.Task) > 0 && string(p.Task) != "null", logLevel: p.Meta.LogLevel, taskID: p.TaskID,
		declared: p.Meta.Capabilities != nil && bool(p.Meta.Capabilities.Extensions.Tasks)}
	if side == Client {
		s.versionNamed(r, ev, p.Meta.ProtocolVersion, p.Meta.Capabilities != nil)
		s.taskNameSent(r, ev, p.TaskID)
		s.clientRequested(r, ev)
		if m.Method == mcp.MethodToolsCall && s.requiresTask(p.Name, r.taskAug) {
			r.tool = chrono.Clip(p.Name, 128)
		}
	}
	if p.Meta.Token != nil {
		if tok, err := jsonrpc.ParseToken(p.Meta.Token); err == nil {
			r.token, r.tokenKey = &tok, tok.Key()
			s.exercise(RuleTokenUnique, side)
			if other := s.activeToken(side, tok); other != nil {
				s.find(RuleTokenUnique, side, verdict.Req("PRG-2").Under(spec.V20260728, "PRG-41"), ev.Seq, false,
					"request %s gives the progress token %s of request %s (sent at #%d), still active", m.ID, tok, other.id, other.seq)
			}
		}
	}
	s.reqs[side][key] = r
	if r.token != nil {
		s.byToken[side][r.tokenKey] = append(s.byToken[side][r.tokenKey], r)
	}
	s.retireCancelled(side)
	s.observe(Activity{Kind: ActRequest, Side: side, ID: m.ID.String(), Method: m.Method, Seq: ev.Seq, At: ev.Offset, Sent: ev.Offset, TaskID: p.TaskID})
	if strings.HasPrefix(ev.Channel, "POST #") {
		s.streams[ev.Channel] = r
	}
	switch m.Method {
	case mcp.MethodLoggingSetLevel:
		s.setLevel[key] = p.Level
	case mcp.MethodTasksGet, mcp.MethodTasksResult:
		if t := s.tasks[p.TaskID]; t != nil && side == Client {
			t.polls = append(t.polls[max(0, len(t.polls)-7):], m.ID.String())
		}
	case mcp.MethodTasksCancel:
		if t := s.tasks[p.TaskID]; t != nil {
			t.cancelAsked = true
		}
	case mcp.MethodSubscriptionsListen:
		if side == Client && s.is2026() {
			s.listenOpened(r, p.Notifications)
		}
	}
}

// closeRequest takes r, answered or retired, out of the requests in
// flight.
func (s *session) closeRequest(r *request) {
	delete(s.reqs[r.side], r.id.Key())
	if r.token == nil {
		return
	}
	same := slices.DeleteFunc(s.byToken[r.side][r.tokenKey], func(q *request) bool { return q == r })
	if len(same) == 0 {
		delete(s.byToken[r.side], r.tokenKey)
		return
	}
	s.byToken[r.side][r.tokenKey] = same
}

// activeToken is side's request in flight that gave tok, nil when none.
// Under 2025-11-25 a task-augmented request keeps its token until its
// task is terminal (PRG-9, PRG-15); under 2026-07-28 a task has no
// progress (PRG-46).
func (s *session) activeToken(side Side, tok jsonrpc.ProgressToken) *request {
	key := tok.Key()
	if same := s.byToken[side][key]; len(same) > 0 {
		return same[0]
	}
	if s.is2026() {
		return nil // no progress for a task (PRG-46): its request's token ends with its response
	}
	for _, r := range s.ended[side] {
		if r.token != nil && r.tokenKey == key && r.created != "" {
			if t := s.tasks[r.created]; t != nil && t.terminal == "" {
				return r
			}
		}
	}
	return nil
}

// response judges a response side sent to the other side's request. head
// is its kind and ID (summarized); its result or error is decoded only
// for the requests whose answer a rule reads.
func (s *session) response(side Side, ev chrono.Event, head *jsonrpc.Message) {
	asker := other(side)
	s.exercise(RuleOneResponse, side)
	isError := head.Kind == jsonrpc.KindError
	if !head.ID.IsValid() {
		if head.NullID && s.unreadable[asker] == 0 {
			if m := decoded(ev); m != nil {
				s.nullIDError(side, asker, ev, m)
			}
		}
		return
	}
	m := head
	key := m.ID.Key()
	r := s.reqs[asker][key]
	if r == nil {
		s.strayResponse(side, asker, ev, m.ID, isError)
		return
	}
	if r.dups > 0 {
		r.dups--
		return
	}
	s.closeRequest(r)
	s.toolAnswered(r)
	s.settleNullErrors(asker, key)
	r.responded, r.respSeq, r.respAt, r.respChan, r.isError = true, ev.Seq, ev.Offset, ev.Channel, isError
	if answerRead(r) || isError && (r.cancelSeq > 0 || s.m.opts.Observe != nil) || s.mayCreateTask(r, ev) || s.answerJudged(r, isError) {
		if full := decoded(ev); full != nil {
			m = full
			if m.Error != nil {
				r.errCode, r.errMsg = m.Error.Code, m.Error.Message
			}
		}
	}
	if promptMethods[r.method] && !r.isError {
		s.rtts = append(s.rtts, ev.Offset-r.at)
		if len(s.rtts) > maxRTTs {
			s.rtts = s.rtts[1:]
		}
	}
	s.keepEnded(r)
	if r.cancelSeq > 0 {
		s.afterCancel(RuleCancelNoResponse, side, r, ev, "a response")
	}
	s.answered(side, r, ev, m, isError)
	s.observe(Activity{Kind: ActResponse, Side: asker, ID: r.id.String(), Method: r.method, Seq: ev.Seq, At: ev.Offset, Sent: r.at,
		Error: r.isError, ErrCode: r.errCode, Cancelled: r.cancelSeq > 0, TaskID: r.created})
}

// strayResponse judges a response to no request in flight: a second
// response, one whose ID has the text of a request's but the other JSON
// type ("5" is not 5), or one for an ID never sent.
func (s *session) strayResponse(side, asker Side, ev chrono.Event, id jsonrpc.ID, isError bool) {
	key := id.Key()
	if s.malformedIDs[asker].has(key) {
		// An answer to a malformed request by its ID: an error (RPC-11),
		// or a result from a receiver lenient enough to serve it ("1.0"
		// for "jsonrpc"), which JSON-RPC allows: its rules bind the sender.
		return
	}
	for _, r := range slices.Backward(s.ended[asker]) {
		if r.id.Key() == key {
			if r.closed || r.dropped {
				return // an answer to a request whose stream was closed is none of the rules'
			}
			if !r.responded {
				// Retired after its cancel (retireCancelled): the answer
				// comes after the cancel, beyond its window.
				r.responded, r.respSeq, r.respAt, r.respChan = true, ev.Seq, ev.Offset, ev.Channel
				s.afterCancel(RuleCancelNoResponse, side, r, ev, "a response")
				return
			}
			s.find(RuleOneResponse, side, verdict.Req("RPC-8"), ev.Seq, false,
				"a second response to request %s (%s), first answered at #%d", r.id, quote(r.method), r.respSeq)
			return
		}
	}
	text := strings.Trim(id.String(), `"`)
	for _, r := range s.reqs[asker] {
		if strings.Trim(r.id.String(), `"`) == text {
			s.find(RuleOneResponse, side, verdict.Req("RPC-8"), ev.Seq, false,
				"a response for ID %s, while request %s (%s, sent at #%d) has the same text with the other JSON type: the IDs differ", id, r.id, quote(r.method), r.seq)
			return
		}
	}
	if at := s.unreadable[asker]; isError && at > 0 {
		// Two causes fit: an error for a request never sent, or the
		// answer to the frame whose ID could not be read, which takes a
		// null ID; the second is the likelier.
		s.find(RuleOneResponse, side, verdict.Req("RPC-11"), ev.Seq, false,
			"an error for ID %s, which the %s never sent as a request: if it answers the unreadable frame at #%d, its ID must be null (RPC-11); if not, it answers nothing (RPC-8)", id, asker, at)
		return
	}
	if s.used[asker].has(key) {
		// Sent, answered or retired, and forgotten since (keepEnded):
		// whether this is a second response or one after a cancel
		// cannot be told.
		s.m.counts[CountForgotten]++
		return
	}
	s.find(RuleOneResponse, side, verdict.Req("RPC-8"), ev.Seq, false, "a response for ID %s, which the %s never sent as a request", id, asker)
}

// answerRead reports whether a rule reads the result or error of r's
// response (answered), beyond whether it is an error.
func answerRead(r *request) bool {
	switch r.method {
	case mcp.MethodToolsCall:
		return r.taskAug
	case mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel, mcp.MethodTasksList:
		return true
	}
	return false
}

// answerJudged reports whether the handshake's and the versions' rules
// read r's answer beyond whether it is an error: a ping's, initialize's
// and server/discover's (small, once or rarely), logging/setLevel's
// error, tools/list's while the server declares task-augmented
// tools/call (TSK-12), and the answer to a request naming a version the
// server did not list.
func (s *session) answerJudged(r *request, isError bool) bool {
	if r.unlisted != "" {
		return true
	}
	switch r.method {
	case mcp.MethodPing, mcp.MethodInitialize, mcp.MethodServerDiscover:
		return true
	case mcp.MethodLoggingSetLevel:
		return isError
	case mcp.MethodToolsList:
		return s.hand.taskCalls && !s.is2026()
	}
	return false
}

// notificationRead reports whether a rule reads the params of a
// notification of method: a cancel, progress, a log message, a task's
// status, a subscription's acknowledgement. Others are read only while a
// subscription is open (subscriptionNotice).
func notificationRead(method string) bool {
	switch method {
	case mcp.NotificationCancelled, mcp.NotificationProgress, mcp.NotificationMessage, mcp.NotificationTaskStatus,
		mcp.NotificationTasks, mcp.NotificationSubscriptionsAcknowledged:
		return true
	}
	return false
}

// answered takes what a response tells of the session: the revision
// initialize agreed to, a log level set, a task created or its status.
// m is the response decoded when answerRead, else only its head.
func (s *session) answered(side Side, r *request, ev chrono.Event, m *jsonrpc.Message, isError bool) {
	if m.Result == nil && m.Error == nil && answerRead(r) {
		return // a response cut short: its body is unread
	}
	if side == Server && s.is2026() {
		s.extensionMethodAnswered(r, ev, isError)
	}
	if side == Server && (r.modern || r.unlisted != "") {
		s.modernAnswered(r, ev, m, isError)
	}
	switch r.method {
	case mcp.MethodInitialize:
		switch {
		case side != Server:
		case !isError:
			s.initializeAnswered(m.Result)
			s.learn(spec.V20251125)
		default:
			s.initializeRefused(r, ev, m)
		}
	case mcp.MethodPing:
		s.pingAnswered(side, r, ev, m, isError)
	case mcp.MethodServerDiscover:
		if side == Server && !isError {
			s.discovered(r, ev, m.Result)
		}
	case mcp.MethodToolsList:
		if side == Server && !isError && s.hand.taskCalls && !s.is2026() {
			s.toolsListed(m.Result)
		}
	case mcp.MethodLoggingSetLevel:
		if !isError {
			s.logLevel = s.setLevel[r.id.Key()]
		}
		if side == Server {
			s.levelAnswered(r, ev, s.setLevel[r.id.Key()])
		}
		delete(s.setLevel, r.id.Key())
	case mcp.MethodToolsCall:
		if r.tool != "" {
			s.plainCallAnswered(r, ev, isError)
		}
		switch {
		case r.taskAug && m.Error == nil:
			s.taskCreated(r, ev, m.Result)
		case s.is2026() && !isError:
			s.extensionTaskCreated(r, ev, m.Result)
		}
	case mcp.MethodTasksGet, mcp.MethodTasksResult:
		s.taskPolled(r, ev, m)
	case mcp.MethodSubscriptionsListen:
		s.listenAnswered(r, ev, isError)
	case mcp.MethodTasksCancel:
		s.taskCancelAnswered(r, ev, m)
	case mcp.MethodTasksList:
		if m.Error == nil {
			s.listed(ev, m.Result, r.seq)
		}
	}
}

// notification judges a notification side sent.
func (s *session) notification(side Side, ev chrono.Event, m *jsonrpc.Message) {
	s.notified[side] = true
	s.exercise(RuleNoNotificationRepl, other(side))
	if strings.HasPrefix(ev.Channel, "POST #") {
		s.notifPosts.add(ev.Channel)
	}
	if side == Server && s.listens > 0 {
		s.subscriptionNotice(ev, m)
	}
	switch m.Method {
	case mcp.NotificationInitialized:
		if side == Client {
			s.initializedSent(ev)
		}
	case mcp.NotificationToolsListChanged:
		if side == Server {
			s.toolsChanged()
		}
	case mcp.NotificationCancelled:
		s.cancel(side, ev, m)
	case mcp.NotificationProgress:
		s.progress(side, ev, m)
	case mcp.NotificationMessage:
		if side == Server {
			s.logMessage(ev, m)
		}
	case mcp.NotificationTaskStatus, mcp.NotificationTasks:
		if side == Server {
			s.taskNotified(ev, m)
		}
	}
}

func errText(m *jsonrpc.Message) string {
	if m.Error == nil {
		return ""
	}
	return fmt.Sprintf("%d %s", m.Error.Code, quote(m.Error.Message))
}

// advance moves the session's clock to now and judges what the silence
// until then shows: a task left working past its grace, a dropped
// stream never resumed nor cancelled.
func (s *session) advance(now time.Duration) {
	if now <= s.now {
		return
	}
	s.now = now
	s.graceTasks()
	s.graceDropped()
	s.graceUninitialized(false)
}

// end judges what the end of the session shows and returns the requests
// still open. Findings that waited for a revision the session never
// showed are judged under the fallback.
func (s *session) end() []Open {
	if s.rev == "" {
		s.learn(s.m.opts.Fallback)
	}
	s.graceTasks()
	s.endTasks()
	s.graceUninitialized(true)
	for _, n := range s.nullErrors {
		s.nullIDUnsettled(n)
	}
	s.nullErrors = nil
	var open []Open
	for _, side := range []Side{Client, Server} {
		for _, r := range s.reqs[side] {
			if r.dropped && !r.resumed && r.cancelSeq == 0 {
				s.abandoned(r)
			}
			if r.cancelSeq > 0 && !r.closed && cancellable(r) && s.now-r.cancelAt > s.window() {
				// The session outlived the cancel's crossing window with
				// neither response nor progress: the cancel was honoured
				// for as long as the wire shows.
				s.exercise(RuleCancelNoResponse, other(side))
				s.exercise(RuleCancelNoProgress, other(side))
			}
			open = append(open, Open{Session: s.key, Side: side, ID: r.id.String(), Method: r.method, Seq: r.seq, Cancelled: r.cancelSeq > 0})
		}
	}
	slices.SortFunc(open, func(a, b Open) int { return int(a.Seq) - int(b.Seq) })
	return open
}

// promptMethods are the requests a peer answers at once, with no work of
// its own: their round trips measure the wire and the peer's scheduling.
var promptMethods = map[string]bool{
	mcp.MethodInitialize: true, mcp.MethodPing: true, mcp.MethodToolsList: true, mcp.MethodServerDiscover: true,
	mcp.MethodLoggingSetLevel: true, mcp.MethodTasksGet: true, mcp.MethodTasksList: true,
}

// maxRTTs is how many round trips a session keeps to size its window.
const maxRTTs = 16

// window is the session's crossing window: eight times the median round
// trip of its prompt requests (what was written before the cancel was
// read arrives within about one round trip; eight leave room for a busy
// machine), within [MinWindow, Options.Window]; Options.Window until a
// round trip was seen.
func (s *session) window() time.Duration {
	if len(s.rtts) == 0 {
		return s.m.opts.Window
	}
	sorted := slices.Clone(s.rtts)
	slices.Sort(sorted)
	return min(max(8*sorted[len(sorted)/2], MinWindow), s.m.opts.Window)
}
