package clientadapter

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/clientrun"
	"github.com/mcpflight/mcpflight/transport"
)

// InProcess is the built-in client as a clientrun.Launcher that runs in
// the calling process: over stdio it reaches the server through the relay
// socket directly (no process is spawned), over HTTP it dials the URL.
// The mutation matrix uses it; "mcpflight check-client" runs the same
// adapter as a child process (mcpflight client-adapter) instead.
type InProcess struct {
	// Faults are the bugs the client has.
	Faults map[Fault]bool
}

// Launch implements clientrun.Launcher.
func (l InProcess) Launch(ctx context.Context, spec clientrun.LaunchSpec) (clientrun.Process, error) {
	actx, cancel := context.WithCancel(ctx)
	p := &inproc{log: spec.Log, cancel: cancel, done: make(chan struct{})}
	spec.Log.State("client", "", fmt.Sprintf("started the built-in client in process (faults: %v)", sortedFaults(l.Faults)))
	go func() {
		err := Run(actx, spec.Instructions, Options{Faults: l.Faults, Socket: spec.Socket}, p.add)
		code := 0
		if err != nil {
			code = 1
		}
		p.mu.Lock()
		p.exit = clientrun.ClientExit{Exited: true, Code: code}
		p.mu.Unlock()
		spec.Log.Append(chrono.Event{Dir: chrono.Harness, Channel: "client", Kind: chrono.KindExit, Text: fmt.Sprintf("client exited with code %d", code)})
		close(p.done)
	}()
	return p, nil
}

type inproc struct {
	log     *chrono.Log
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	reports []clientrun.Report
	exit    clientrun.ClientExit
}

func (p *inproc) add(r clientrun.Report) {
	p.mu.Lock()
	p.reports = append(p.reports, r)
	p.mu.Unlock()
	p.log.Harness(chrono.KindNote, "adapter", "report: "+chrono.Sanitize(r.String(), false))
}

func (p *inproc) Done() <-chan struct{} { return p.done }

func (p *inproc) Reports() []clientrun.Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]clientrun.Report(nil), p.reports...)
}

func (p *inproc) Exit() clientrun.ClientExit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// Stop ends the adapter if it still runs (its context, the in-process
// counterpart of SIGTERM).
func (p *inproc) Stop(ctx context.Context) transport.Teardown {
	select {
	case <-p.done:
		return transport.Teardown{ExitedAfter: transport.StepNone}
	default:
	}
	p.log.Harness(chrono.KindDecision, "client", "the client is still running at the end of the case: cancelling it")
	p.cancel()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-p.done:
		return transport.Teardown{ExitedAfter: transport.StepSIGTERM}
	case <-t.C:
	case <-ctx.Done():
	}
	return transport.Teardown{ExitedAfter: transport.StepSIGKILL, Err: fmt.Errorf("the in-process client did not return")}
}

func sortedFaults(set map[Fault]bool) []string {
	var out []string
	for f, on := range set {
		if on {
			out = append(out, string(f))
		}
	}
	sort.Strings(out)
	return out
}
