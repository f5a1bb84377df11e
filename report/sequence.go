package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// SequenceOptions configures Sequence.
type SequenceOptions struct {
	// Mark is the sequence number of an event to flag as the first wrong
	// event (a case's Outcome.ActualSeq); 0 for none.
	Mark uint64
	// Lanes names the two ends; checker and server when empty.
	Lanes Lanes
}

// Lane columns of the text sequence diagram.
const (
	seqLaneHarness = 20
	seqLaneServer  = 40
)

// Sequence writes a chronology as a text sequence diagram: one line per
// event with its seq and offset, the checker, harness and server lanes,
// frames as arrows between the checker and the server, stderr as a dotted
// arrow from the server, harness events as ◆ on their own lane, and the
// event's summary. A cancel and the cancelled request's response or
// progress arriving within RaceWindow of it (they may have crossed) are
// flagged, and so is the marked event. Untrusted text is
// sanitised.
func Sequence(w io.Writer, events []chrono.Event, opts SequenceOptions) error {
	bw := bufio.NewWriter(w)
	races := racing(events)
	head := []rune(strings.Repeat(" ", seqLaneServer+24))
	place := func(at int, s string) { copy(head[at:], []rune(s)) }
	lanes := opts.Lanes.orDefault()
	place(0, lanes.Left)
	place(seqLaneHarness-3, "harness")
	place(max(seqLaneHarness+5, seqLaneServer+1-len([]rune(lanes.Right))), lanes.Right)
	fmt.Fprintf(bw, "%5s %12s  %s\n", "seq", "offset", strings.TrimRight(string(head), " "))
	var out, in, harness int
	for _, e := range events {
		lanes, label := seqRow(e)
		switch {
		case e.Dir == chrono.Out:
			out++
		case e.Dir == chrono.In:
			in++
		default:
			harness++
		}
		line := fmt.Sprintf("%5d %12s  %s  %s", e.Seq, offsetMicros(e.Offset), lanes, label)
		if other := races[e.Seq]; other != 0 {
			line += fmt.Sprintf("  ⚡ races #%d", other)
		}
		if opts.Mark != 0 && e.Seq == opts.Mark {
			line += "  ✗ first wrong event"
		}
		fmt.Fprintln(bw, line)
	}
	fmt.Fprintf(bw, "%s: %d out, %d in, %d harness", plural(len(events), "event"), out, in, harness)
	if n := len(races); n > 0 {
		fmt.Fprintf(bw, "; %d frames racing (a cancel and its request's response or progress within %v)", n, RaceWindow)
	}
	fmt.Fprintln(bw)
	return bw.Flush()
}

// seqRow draws the lanes of one event and returns them with its label.
func seqRow(e chrono.Event) (string, string) {
	r := []rune(strings.Repeat(" ", seqLaneServer+1))
	r[0], r[seqLaneHarness], r[seqLaneServer] = '│', '│', '│'
	fill := func(from, to int, c rune) {
		for i := from; i <= to; i++ {
			r[i] = c
		}
	}
	shaft := '─'
	if e.Kind == chrono.KindHTTP {
		shaft = '╌'
	}
	switch {
	case e.Kind == chrono.KindStderr:
		fill(seqLaneHarness+1, seqLaneServer-1, '┄')
		r[seqLaneHarness+1] = '◀'
	case e.Dir == chrono.Out:
		fill(1, seqLaneServer-1, shaft)
		r[seqLaneHarness] = '┼'
		r[seqLaneServer-1] = '▶'
	case e.Dir == chrono.In:
		fill(1, seqLaneServer-1, shaft)
		r[seqLaneHarness] = '┼'
		r[1] = '◀'
	default:
		r[seqLaneHarness] = '◆'
	}
	return string(r), diagramLabel(e)
}

// offsetMicros formats a chronology offset as +seconds with microsecond
// precision, fine enough to order racing frames.
func offsetMicros(d time.Duration) string {
	return "+" + strconv.FormatFloat(d.Seconds(), 'f', 6, 64) + "s"
}
