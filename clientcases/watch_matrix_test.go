package clientcases_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientadapter"
	"github.com/mcpflight/mcpflight/clientcases"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/judge"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/verdict"
	"github.com/mcpflight/mcpflight/watch"
)

// watchTimedClient lists the client faults the passive rules see only
// when the timing falls so, with the reason: a run may catch them or not,
// and neither fails the matrix.
var watchTimedClient = map[clientadapter.Fault]string{
	clientadapter.FaultCancelsCompleted: "the cancel follows the response by a fraction of a millisecond, within the crossing window: on the wire it may have crossed " +
		"the response (CAN-11), and check-client knows the host had the response from its adapter's report, written before the cancel; on a " +
		"loaded machine the cancel can land beyond the window, and then the rule sees it (once in a full suite at load 2 to 4, 2026-12-07)",
}

// watchBlindClient lists the client faults the passive rules (monitor:
// what watch and judge apply to a host) cannot see on the wire, with the
// reason. Every other fault must be caught under the requirement the
// check-client case that kills it names.
var watchBlindClient = map[clientadapter.Fault]string{
	clientadapter.FaultNoCancelOnTimeout: "a host that stops waiting on its timeout without a cancel sends nothing: the wire shows a request still open, " +
		"which a host may leave open as long as it likes; check-client knows the host gave up because its instructions set the timeout",
	clientadapter.FaultDeliversLateResponse: "what the host does with a late response happens inside it: check-client reads the adapter's report of what the caller got",
	clientadapter.FaultNoMaxTimeout:         "a maximum timeout is the host's own clock: the wire shows a long request, never that the host should have stopped it",
	clientadapter.FaultKillsServerWithoutEOF: "the host's signals to its server are outside the conversation; watch's stdio shim records the SIGTERM it forwards " +
		"but no rule of the conversation judges how a host ends its server (check-client's stdio/shutdown-closes-stdin does)",
	clientadapter.FaultFallbackOnlyOn32601: "falling back from server/discover is the host's choice after an answer: a host that gives up instead sends nothing, " +
		"and nothing on the wire says it should have tried initialize",
	clientadapter.FaultIgnoresPing: "a ping the host never answers is a server request still open when the session ends: PNG-1's \"promptly\" sets no deadline " +
		"and PNG-3 leaves the timeout to the sender, so the wire cannot tell a host that ignores the ping from a slow one " +
		"(an answer that is not an empty result is caught: ping-empty-result, PNG-1)",
	clientadapter.FaultDropIsCancel: "a host that takes a dropped stream for a cancel and stops sends nothing: the monitor's abandoned-without-cancel " +
		"rule needs the session to outlive its grace, and check-client ends the session before it",
	clientadapter.FaultReissuesSameID: "re-issuing a broken request with its ID is allowed once that request is gone: whether the server still holds it is not on the wire",
}

// flipped turns check-client's chronology, where mcpflight is the server
// and the client's frames come in, into the host's view the monitor
// judges (chrono.Out from the host).
func flipped(ev chrono.Event) chrono.Event {
	switch ev.Dir {
	case chrono.In:
		ev.Dir = chrono.Out
	case chrono.Out:
		ev.Dir = chrono.In
	}
	return ev
}

// watchedLauncher puts watch's proxy between the client and
// check-client's Streamable HTTP server, with a judge of the client's
// side behind it, so that the judge sees what watch would record.
type watchedLauncher struct {
	inner    clientrun.Launcher
	revision string
	mu       sync.Mutex
	found    []monitor.Finding
	closers  []func()
}

func (w *watchedLauncher) Launch(ctx context.Context, spec clientrun.LaunchSpec) (clientrun.Process, error) {
	target, err := url.Parse(spec.Instructions.URL)
	if err != nil {
		return nil, err
	}
	j := judge.New(judge.Options{Transport: "http", Monitor: monitor.Options{Sides: []monitor.Side{monitor.Client}, Fallback: w.revision},
		Emit: func(f monitor.Finding) {
			w.mu.Lock()
			w.found = append(w.found, f)
			w.mu.Unlock()
		}})
	rec := watch.NewRecorder(watch.RecorderConfig{Sinks: []watch.Sink{j}})
	ln, err := watch.Listen("", false)
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = watch.Serve(sctx, ln, watch.Proxy(watch.ProxyConfig{Target: target, Recorder: rec}), rec)
	}()
	w.mu.Lock()
	w.closers = append(w.closers, func() {
		stop()
		<-served
		_ = rec.Close(context.Background())
		j.Report() // ends the sessions: what only their end shows
	})
	w.mu.Unlock()
	spec.Instructions.URL = watch.LocalURL(ln, target)
	spec.Arg = spec.Instructions.URL
	if spec.Env, err = spec.Instructions.Environ(); err != nil {
		return nil, err
	}
	return w.inner.Launch(ctx, spec)
}

// findings closes the proxies and returns what their judges found.
func (w *watchedLauncher) findings() []monitor.Finding {
	w.mu.Lock()
	closers := w.closers
	w.closers = nil
	w.mu.Unlock()
	for _, c := range closers {
		c()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.found
}

// TestWatchSeesClientFaults: each client fault a passive rule can see is
// caught by the monitor on the traffic of the check-client cases that
// kill it, under the requirement the case names; the others are listed
// in watchBlindClient with the reason.
func TestWatchSeesClientFaults(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the client killers of every fault")
	}
	var (
		mu     sync.Mutex
		caught = map[clientadapter.Fault]bool{}
		runs   = map[clientadapter.Fault]bool{}
	)
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		n := 0
		for f := range runs {
			_, blind := watchBlindClient[f]
			if why, timed := watchTimedClient[f]; timed {
				t.Logf("%s caught: %v (%s)", f, caught[f], why)
				continue
			}
			switch {
			case caught[f] && blind:
				t.Errorf("watch catches %s: remove it from watchBlindClient", f)
			case !caught[f] && !blind:
				t.Errorf("watch catches %s on no row and watchBlindClient does not say why", f)
			case caught[f]:
				n++
			}
		}
		t.Logf("%d of %d client faults caught by the passive rules, %d listed as blind, %d as caught when the timing falls so",
			n, len(runs), len(watchBlindClient), len(watchTimedClient))
	})
	byID := map[string]clientrun.Case{}
	for _, c := range clientcases.All() {
		byID[c.ID] = c
	}
	for fault, killers := range clientKillers {
		if _, conforming := conformingVariants[fault]; conforming {
			continue
		}
		for _, k := range killers {
			if k.info {
				continue // the fault breaks no rule there
			}
			for _, on := range k.on {
				t.Run(fmt.Sprintf("%s/%s/%s", fault, on, k.id), func(t *testing.T) {
					t.Parallel()
					runSlots <- struct{}{}
					defer func() { <-runSlots }()
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					client := clientadapter.InProcess{Faults: map[clientadapter.Fault]bool{fault: true}}
					var launcher clientrun.Launcher = client
					proxied := &watchedLauncher{inner: client, revision: on.rev}
					if on.transport == clientrun.TransportHTTP {
						launcher = proxied
					}
					rep, err := clientrun.Run(ctx, clientrun.Config{
						Client: launcher, ClientName: "built-in",
						Transport: on.transport, Revision: on.rev, BothRevisions: true, Cases: []clientrun.Case{byID[k.id]},
					})
					found := proxied.findings()
					if err != nil {
						t.Fatal(err)
					}
					res := rep.Results[0]
					if v := res.Outcome.Verdict; v != verdict.Fail && v != verdict.Warn {
						if _, blind := watchBlindClient[fault]; blind {
							// A timing case of check-client's may miss on a
							// loaded machine; the row then shows nothing.
							t.Skipf("%s did not kill %s (%s) this time: the row proves nothing", k.id, fault, v)
						}
						t.Fatalf("%s did not kill %s (%s): the row proves nothing", k.id, fault, v)
					}
					want := res.Outcome.Requirement
					if on.transport == clientrun.TransportStdio {
						// Over stdio the relay's chronology is the wire, in
						// the checker's direction.
						m := monitor.New(monitor.Options{Sides: []monitor.Side{monitor.Client}, Revision: on.rev, Transport: on.transport})
						for _, ev := range res.Events {
							m.Event(k.id, flipped(ev))
						}
						m.End()
						found = m.Findings()
					}
					var seen []string
					hit := false
					for _, f := range found {
						seen = append(seen, fmt.Sprintf("%s %s: %s", f.Rule, f.Requirement, f.Text))
						hit = hit || f.Requirement == want
					}
					mu.Lock()
					runs[fault] = true
					caught[fault] = caught[fault] || hit
					mu.Unlock()
					if _, blind := watchBlindClient[fault]; !hit && !blind {
						t.Logf("%s (check-client: %s %s) not caught on this row; findings:\n%s", fault, k.id, want, strings.Join(seen, "\n"))
					}
				})
			}
		}
	}
	// Every fault of the adapter is either run above or a conforming or
	// info-only variant.
	for f := range clientadapter.Faults() {
		_, listed := clientKillers[f]
		_, conforming := conformingVariants[f]
		if !listed && !conforming {
			t.Errorf("client fault %s has no killer: the matrix cannot run it", f)
		}
	}
}
