package cases_test

import (
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/verdict"
)

// Reasons shared by several faults of watchBlind.
const (
	// blindProbe: the fault answers only a request a conforming host
	// never sends, so watching a host never shows it.
	blindProbe = "the fault answers only check's own probe, which a conforming host never sends: "
)

// watchBlind lists the reference server's faults the passive rules
// (monitor: what watch and judge apply) do not see on the wire of the
// cases that catch them, with the reason: the wire cannot show the
// fault, or a rule that read what it shows would have to guess. Every
// other fault must be caught.
var watchBlind = map[refserver.Fault]string{
	// The server's insides: counters, handlers, workers.
	refserver.FaultLeakOnCancel:           "the resource a cancelled operation keeps is in the server's counters, which only the control extension shows",
	refserver.FaultDoubleCleanup:          "a double release is in the server's counters, which only the control extension shows",
	refserver.FaultHangAfterCancel:        "a cancelled handler that never ends sends nothing: only the control extension's end checkpoint or an observer shows it",
	refserver.FaultCancelOnDisconnect:     "a handler cancelled by a dropped stream shows only through the observer",
	refserver.FaultStreamCloseNotCancel:   "whether the handler stopped when its stream was closed is not on the wire: its killers need the control extension or an observer",
	refserver.FaultIgnoreStdinEOF:         "how the server ends is the host's to see (it closes stdin and waits), not the conversation's; watch's stdio shim records the exit",
	refserver.FaultTaskSupportMissing:     "which tools the server runs as tasks is its own knowledge: a tool listed without execution.taskSupport is one that takes no task, as far as the wire says",
	refserver.FaultVersionMismatch:        "whether the server supports the version it was asked for is not on the wire, and a server that does not may answer another",
	refserver.FaultListLeaksOtherSessions: "another session's task in tasks/list shows only across sessions the monitor keeps apart",
	refserver.FaultDiscoverMissingVersion: "server/discover and the initialize that disagrees with it go on two connections, which the monitor keeps apart; a host that read 2026-07-28 in discover does not initialize",
	refserver.FaultLogCrossesStreams:      "the step logs name their operation by the reference server's key, which a case sets only through the control extension: a log message that names no request cannot be tied to a stream on the wire",
	refserver.FaultPollIntervalIgnored:    "pollInterval is advice (TSK-43), not a rule of the conversation",

	// Absences: a request or subscription left open, with no deadline.
	refserver.FaultIDZeroAbsent:           "request 0 left unanswered is a request still open when the session ends: listed, not judged, since a host may stop waiting",
	refserver.FaultResultHangsAfterCancel: "a tasks/result never answered is a request still open at the end: listed, not judged",
	refserver.FaultCancelUnknownHitsOther: "the call the fault ends in silence is a request still open at the end: listed, not judged, since the call may still be running",
	refserver.FaultLoseEventsOnResume:     "the call's response never comes on the resumed streams: a request still open at the end, which the wire cannot tell from a call still running (HTTP-21's eventually sets no deadline)",
	refserver.FaultListenNoAck:            "a subscription that gets nothing at all, acknowledgement included, shows only an absence with no deadline until the host stops waiting: SUB-2 decides once something else comes on the subscription or the server ends it",

	// Timing the wire cannot tell from a legitimate race.
	refserver.FaultProgressAfterCancel: "the one progress comes as the server reads the cancel, within the crossing window: on the wire it is progress written before the cancel arrived",

	// Probes a host never sends.
	refserver.FaultCrashOnMalformedCancel:       blindProbe + "a cancel without a valid requestId (the server then stops: a session that ended, which a host may end too)",
	refserver.FaultNoSessionCheck:               blindProbe + "a request without a session ID",
	refserver.FaultNoOriginCheck:                blindProbe + "a foreign Origin",
	refserver.FaultNoProtocolVersionCheck:       blindProbe + "an unsupported MCP-Protocol-Version header",
	refserver.FaultHeaderMismatchAccepted:       blindProbe + "HTTP headers that disagree with the body",
	refserver.FaultAcceptInvalidLevel:           blindProbe + "logging/setLevel with a level RFC 5424 does not have",
	refserver.FaultAcceptUnknownLogLevel:        blindProbe + "a request whose logLevel RFC 5424 does not have",
	refserver.FaultMissingLevelInternalError:    blindProbe + "logging/setLevel without a level",
	refserver.FaultMissingTaskIDInternalError:   blindProbe + "a task method without a taskId",
	refserver.FaultExtTaskIDInternalError:       blindProbe + "a task method without a taskId",
	refserver.FaultIllTypedCursorAccepted:       blindProbe + "tasks/list with a cursor that is no string",
	refserver.FaultBogusCursorAccepted:          blindProbe + "tasks/list with a cursor the server never gave",
	refserver.FaultForbiddenRunsPlain:           blindProbe + "a tool whose taskSupport forbids tasks called as a task (TSK-8 forbids a host to)",
	refserver.FaultTaskUpdateRejectsUnknownKey:  blindProbe + "tasks/update answering an input request the server never made",
	refserver.FaultEnvelopeNotChecked:           blindProbe + "a request without a required envelope field",
	refserver.FaultStickyVersion:                blindProbe + "a request naming an unknown revision after one naming a known one, on one connection",
	refserver.FaultDieOnMalformedInput:          blindProbe + "a frame that is no JSON-RPC message (the server then stops answering: requests still open at the end)",
	refserver.FaultTruncatedSwallowsNext:        blindProbe + "a truncated frame (the request after it is then never answered: still open at the end)",
	refserver.FaultDuplicateIDDropsFirst:        blindProbe + "a request reusing the ID of one in flight (RPC-6 forbids it); which of the two the one response answers is not on the wire",
	refserver.FaultMuteAfterNamelessCall:        blindProbe + "tools/call without a name (the server then answers nothing: requests still open at the end)",
	refserver.FaultMuteAfterIllTypedToolsCursor: blindProbe + "tools/list with a cursor that is no string (the server then answers nothing: requests still open at the end)",
	refserver.FaultListenBadFilterCrash:         blindProbe + "subscriptions/listen without a notifications filter (the server then stops: a session that ended)",

	// Answers whose fault lies in what only the server knows.
	refserver.FaultStaleToken:               "the refusal of a reused token is a -32602 whose cause only its message names: the same answer fits arguments the server finds invalid",
	refserver.FaultUnknownTaskInternalError: "whether the task exists is the server's to know (it may have expired, or have been made before the capture): a -32603 for it fits a real internal error too",

	// Judgements the wire does not decide.
	refserver.FaultSequentialTaskIDs: "TSK-81 binds only a server that cannot bind its tasks to an authorization context, which the wire does not show " +
		"(a server that binds them may number its tasks), and whether IDs can be guessed is a heuristic over several of them " +
		"that check's tasks/unguessable-ids grades a warn, never a fail: a passive rule would accuse a conforming server",
	refserver.FaultTasksResultOn2026: "the case asks tasks/list, which the fault serves and TSX-65 does not name (its sentence is about tasks/result), " +
		"then nothing more; asked tasks/result of a task never issued, the fault answers -32602 (task not found), an error a server that does not know " +
		"the method may also give when it refuses the envelope first (an invalid logLevel, LOG-45; a malformed clientInfo): only a result shows the " +
		"removed method served, and removed-methods reports that (TSX-65)",
}

// TestWatchSeesFaults: each fault of the reference server that a passive
// rule can see is caught by the monitor, the rules watch and judge apply,
// on the traffic of the cases that catch it (the server's control
// extension hidden, as a user's server has none), under one of the
// requirements the fault breaks: the requirement check names. The faults
// it cannot see are listed in watchBlind, each with the reason; a listed
// fault the monitor catches, or a listed fault with no row, fails the
// test as well, so that the list stays true.
func TestWatchSeesFaults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the catalogue's killers of every fault in real time")
	}
	type job struct {
		r   row
		sel []probe.Case
	}
	var jobs []job
	rowsOf := map[refserver.Fault]int{}
	breaksOf := map[refserver.Fault][]string{}
	for _, r := range matrixRows() {
		if sel := modeKillers(r, evidenceMode{"wire", false}); len(sel) > 0 {
			jobs = append(jobs, job{r, sel})
			rowsOf[r.fault]++
			for _, req := range r.faultBreaks() {
				if !slices.Contains(breaksOf[r.fault], req) {
					breaksOf[r.fault] = append(breaksOf[r.fault], req)
				}
			}
		}
	}
	var (
		mu     sync.Mutex
		caught = map[refserver.Fault]bool{}
		done   = map[refserver.Fault]int{}
	)
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		complete := true
		for _, f := range slices.Sorted(maps.Keys(rowsOf)) {
			if done[f] < rowsOf[f] {
				complete = false // a filtered run: this fault's verdict needs all its rows
				continue
			}
			_, listed := watchBlind[f]
			switch {
			case caught[f] && listed:
				t.Errorf("watch catches %s: remove it from watchBlind", f)
			case !caught[f] && !listed:
				t.Errorf("watch does not catch %s (it breaks %v) on any of its rows: fix the rule, or list the fault in watchBlind with the reason", f, breaksOf[f])
			}
		}
		if !complete {
			return
		}
		for _, f := range slices.Sorted(maps.Keys(watchBlind)) {
			if rowsOf[f] == 0 {
				t.Errorf("watchBlind lists %s, which no row runs in the wire mode: remove it", f)
			}
		}
		n := 0
		for _, c := range caught {
			if c {
				n++
			}
		}
		t.Logf("%d of %d faults caught by the passive rules, %d blind", n, len(rowsOf), len(rowsOf)-n)
	})
	prof := wireProfile(t)
	for _, j := range jobs {
		r := j.r
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			rep, err := runEach(r.mk(true), runner.Config{Profile: prof, Cases: j.sel, Version: r.rev(),
				CloseTimeout: 300 * time.Millisecond, CaseTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			transport := "stdio"
			if r.overHTTP {
				transport = "http"
			}
			m := monitor.New(monitor.Options{Sides: []monitor.Side{monitor.Server}, Revision: r.rev(), Transport: transport, Schema: true})
			for _, res := range rep.Results {
				for _, ev := range res.Events {
					m.Event(res.ID, ev)
				}
				m.EndSession(res.ID)
			}
			breaks := r.faultBreaks()
			hit := slices.ContainsFunc(m.Findings(), func(f monitor.Finding) bool {
				return (f.Verdict == verdict.Fail || f.Verdict == verdict.Warn) && slices.Contains(breaks, f.Requirement)
			})
			for _, f := range m.Schema().Findings { // a schema violation is a fail
				hit = hit || slices.Contains(breaks, f.Requirement)
			}
			mu.Lock()
			defer mu.Unlock()
			caught[r.fault] = caught[r.fault] || hit
			done[r.fault]++
		})
	}
}
