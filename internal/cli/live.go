package cli

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/report"
	"github.com/mcpflight/mcpflight/results"
)

// liveOutput is check's console output while the run goes on, a
// runner.Watcher. It prints the text report as the run produces it: the
// header once the server is known, then the results in the text report's
// order (grouped by area, areas in the order the catalogue first names
// them, catalogue order within each), each as soon as it and every result
// before it in that order have finished, so that an area's heading is
// printed once whatever order the catalogue interleaves areas in; and,
// given the final report, the rest (the skips folded by reason, the
// teardown grade, the schema check, the findings' recap, the summary).
// What it prints in all is report.Text's report. On a terminal it also
// keeps one status line at the bottom ("[37/84] 3 running:
// cancel/duplicate, … 12s"), erased before anything else is printed and
// at the end, so that no trail of lines is left. Quiet prints the summary
// line alone.
type liveOutput struct {
	mu       sync.Mutex
	w        io.Writer
	stream   *report.TextStream // nil when quiet
	terminal bool
	redact   *chrono.Redactor
	// width is the terminal's width in columns; the status line is cut
	// to one column less, so that it never wraps.
	width int

	header results.Report
	// order is the cases' indices in the text report's order
	// (report.AreaOrder); printed counts the results printed, a prefix
	// of order.
	order   []int
	printed int
	held    map[int]results.Result // finished, waiting for earlier cases
	total   int                    // cases in the run
	done    int                    // cases finished
	running []runningCase          // started and not finished, in start order
	status  string                 // the status line drawn, "" if none
	stop    chan struct{}          // closed by Close: stops the clock
	// whole is set for a run of several revisions (wholeAtEnd): each
	// revision's run starts its indices at 0 and the report groups
	// results across them, so nothing is printed before End.
	whole   bool
	began   bool
	perRun  int // cases in one revision's run
	opts    report.TextOptions
	closing sync.Once
	// started is when the status line's clock started; tickDone is
	// closed when its ticker has stopped, nil while there is none.
	started  time.Time
	tickDone chan struct{}
	// negotiating is set from Negotiating until Began.
	negotiating bool
}

// runningCase is one case the status line names.
type runningCase struct {
	i  int
	id string
}

// statusTick is how often the status line's elapsed time is redrawn.
const statusTick = time.Second

// newLiveOutput returns check's console output on w for a run of the
// cases whose areas are areas (caseAreas), in the run's order: the text
// report (with opts), a status line when terminal, or only the summary
// when quiet.
func newLiveOutput(w io.Writer, areas []string, opts report.TextOptions, terminal, quiet bool, width int, redact *chrono.Redactor) *liveOutput {
	l := &liveOutput{w: w, terminal: terminal && !quiet, redact: redact, total: len(areas), order: report.AreaOrder(areas), width: width,
		held: map[int]results.Result{}, stop: make(chan struct{})}
	if !quiet {
		l.stream = report.NewTextStream(w, opts)
	}
	l.opts = opts
	return l
}

// wholeAtEnd makes l print the report only at End, for a run of one
// catalogue per revision; the status line counts the cases of all of
// them, as many as it has been told of so far.
func (l *liveOutput) wholeAtEnd() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.whole = true
}

// Negotiating shows, on a terminal, that the run has begun: the status
// line says the revision is being negotiated and starts its clock, before
// the target has answered anything (a target slow to start, or one that
// never answers, would otherwise leave the screen blank).
func (l *liveOutput) Negotiating() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.negotiating = true
	l.startClock()
}

// startClock starts the status line's clock, once; l.mu is held.
func (l *liveOutput) startClock() {
	if l.tickDone != nil || !l.terminal {
		return
	}
	if l.started.IsZero() {
		l.started = time.Now()
	}
	l.draw()
	l.tickDone = make(chan struct{})
	go l.tick(l.tickDone)
}

// Began implements runner.Watcher: it starts the status line's clock,
// unless Negotiating has.
func (l *liveOutput) Began(header results.Report) {
	l.mu.Lock()
	defer l.mu.Unlock()
	redactHeader(&header, l.redact)
	if l.began {
		// The next revision's run of a --protocol both run.
		l.total += l.perRun
		l.draw()
		return
	}
	l.began = true
	l.negotiating = false
	l.perRun = l.total
	l.header = header
	if l.started.IsZero() {
		l.started = header.Started
	}
	l.startClock()
}

// tick redraws the status line every statusTick until End, then closes
// done.
func (l *liveOutput) tick(done chan struct{}) {
	defer close(done)
	t := time.NewTicker(statusTick)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			l.draw()
			l.mu.Unlock()
		}
	}
}

// Started implements runner.Watcher.
func (l *liveOutput) Started(i int, c probe.Case) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running = append(l.running, runningCase{i, c.ID})
	l.draw()
}

// Finished implements runner.Watcher: it prints what is now known in
// catalogue order.
func (l *liveOutput) Finished(i int, res results.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running = slices.DeleteFunc(l.running, func(r runningCase) bool { return r.i == i })
	l.done++
	redactResult(&res, l.redact)
	if l.whole {
		l.draw()
		return
	}
	l.held[i] = res
	if l.stream != nil {
		l.printReady()
	}
	l.draw()
}

// printReady prints the results now due: once the header can be printed
// (the first case in catalogue order that had a handshake, or every case,
// has finished), every finished case whose predecessors in the text
// report's order are printed.
func (l *liveOutput) printReady() {
	if l.printed == len(l.order) {
		return
	}
	if _, due := l.held[l.order[l.printed]]; !due {
		return
	}
	if l.printed == 0 {
		// The header names the server of the first handshake in
		// catalogue order: wait until it is known.
		server, known := l.firstServer()
		if !known {
			return
		}
		if server == nil && l.header.Negotiation != nil {
			// No case had a session: the probes heard the server name
			// itself (as runner.RunProtocol's report says).
			server = l.header.Negotiation.Server
		}
		l.header.Server = server
		l.erase()
		l.stream.Header(&l.header)
	}
	l.erase()
	for ; l.printed < len(l.order); l.printed++ {
		i := l.order[l.printed]
		res, ok := l.held[i]
		if !ok {
			break
		}
		delete(l.held, i)
		l.stream.Result(res)
	}
	_ = l.stream.Flush()
}

// firstServer is the server of the first case in catalogue order that
// had a handshake, and whether it is known yet: it is not while a case
// before that one, or before every case when none had one, is running.
func (l *liveOutput) firstServer() (*results.Implementation, bool) {
	for i := 0; i < l.total; i++ {
		res, ok := l.held[i]
		if !ok {
			return nil, false
		}
		if res.Server != nil {
			return res.Server, true
		}
	}
	return nil, true
}

// Close erases the status line and stops its clock; End calls it, and
// check defers it for the paths that end without a report.
func (l *liveOutput) Close() {
	l.closing.Do(func() {
		l.mu.Lock()
		close(l.stop)
		l.erase()
		l.terminal = false
		done := l.tickDone
		l.mu.Unlock()
		if done != nil {
			<-done
		}
	})
}

// End prints the rest of the final report rep (already redacted): the
// header and results not printed yet (an interrupted run's, or all of
// them when no case had a handshake), and what report.TextStream's End
// writes after them; quiet, only the summary line. It erases the status
// line first. The results printed are a prefix of rep's in the text
// report's order, even when rep leaves out the cases that never started:
// every area before the last printed is complete, and the last one's
// first case has finished, so rep's order of those areas is AreaOrder's.
func (l *liveOutput) End(rep *results.Report) error {
	l.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	if rep.NoSession != nil {
		// No case ran: the one line is the caller's, on stderr.
		return nil
	}
	if l.stream == nil {
		_, err := fmt.Fprintln(l.w, report.Summary(rep))
		return err
	}
	if l.whole {
		return report.Text(l.w, rep, l.opts)
	}
	if l.printed == 0 {
		l.stream.Header(rep)
	}
	return l.stream.End(rep)
}

// caseAreas is the area of each case, in the run's order.
func caseAreas[C interface{ Area() string }](cases []C) []string {
	areas := make([]string, len(cases))
	for i, c := range cases {
		areas[i] = c.Area()
	}
	return areas
}

// erase removes the status line, if one is drawn.
func (l *liveOutput) erase() {
	if l.status == "" {
		return
	}
	fmt.Fprint(l.w, "\r\x1b[K")
	l.status = ""
	flushWriters(l.w)
}

// draw redraws the status line on a terminal.
func (l *liveOutput) draw() {
	if !l.terminal {
		return
	}
	line := l.statusLine(time.Since(l.started))
	fmt.Fprint(l.w, "\r\x1b[K"+line)
	l.status = line
	// The line is ours (case IDs and counts): nothing in it needs
	// holding back for the redactor.
	flushWriters(l.w)
}

// statusLine is "[done/total] N running: id, id +M  12s", as many IDs
// as fit the terminal's width less one column.
func (l *liveOutput) statusLine(elapsed time.Duration) string {
	line := fmt.Sprintf("[%d/%d]", l.done, l.total)
	clock := fmt.Sprintf("  %ds", int(elapsed.Seconds()))
	limit := max(l.width-1, 24) - len(clock)
	if l.negotiating {
		line += " negotiating the protocol revision with the target"
	}
	if n := len(l.running); n > 0 {
		line += fmt.Sprintf(" %d running", n)
		names := ""
		for k, r := range l.running {
			next := ", " + chrono.Sanitize(r.id, false)
			if k == 0 {
				next = ": " + next[2:]
			}
			more := ""
			if rest := n - k - 1; rest > 0 {
				more = fmt.Sprintf(" +%d", rest)
			}
			if len(line)+len(names)+len(next)+len(more) > limit {
				if names != "" {
					names += fmt.Sprintf(" +%d", n-k)
				}
				break
			}
			names += next
		}
		line += names
	}
	if len(line) > limit {
		line = line[:limit]
	}
	return line + clock
}
