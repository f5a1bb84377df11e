package report

import (
	"bufio"
	"io"

	"github.com/mcpflight/mcpflight/results"
)

// TextStream writes the text report piece by piece while a run goes on:
// Header once, then Result for each result as it is known, then End with
// the final report. Given a prefix of the final report's results in the
// text report's order (grouped by area, areas in order of first
// appearance, the report's order within each), it writes the bytes Text
// writes for that report: End writes the results not given yet, the
// sections Text ends with, and the summary. What it writes may stay
// buffered until Flush or End.
type TextStream struct {
	bw      *bufio.Writer
	t       textWriter
	verbose bool
	// area is the area whose heading was written last, opened whether
	// one was.
	area   string
	opened bool
	// given counts the results given (Result, or End's rest).
	given int
}

// NewTextStream returns a stream writing to w.
func NewTextStream(w io.Writer, opts TextOptions) *TextStream {
	bw := bufio.NewWriter(w)
	return &TextStream{bw: bw, t: textWriter{w: bw, color: opts.Color}, verbose: opts.Verbose}
}

// Header writes the report's first lines: the target, protocol, profile,
// and the server of r.Server (which the caller must know by then: the
// first handshake in the report's order).
func (s *TextStream) Header(r *results.Report) { s.t.header(r) }

// Result writes one result, under its area's heading when it is the
// first result of its area written; a skip is folded into End's skips
// section unless the stream is verbose. A stream is for a run of one
// revision: the report of several (Text) names each result's revision.
func (s *TextStream) Result(res results.Result) { s.result(res, "") }

// result writes res, with revision (revisionNote) beside its transport.
func (s *TextStream) result(res results.Result, revision string) {
	s.given++
	if folds(res, s.verbose) {
		return
	}
	if !s.opened || res.Area != s.area {
		s.t.linef("")
		s.t.linef("%s", s.t.bold(res.Area))
		s.area, s.opened = res.Area, true
	}
	s.t.result(res, s.verbose, revision)
}

// Flush writes what the stream holds.
func (s *TextStream) Flush() error { return s.bw.Flush() }

// End writes the rest of the final report r: its results not given yet
// (those after the first Result calls' count, in the text report's
// order), the skips folded by reason (unless verbose), the teardown
// grade, the schema check, the recap of the findings and the summary
// line; and flushes.
func (s *TextStream) End(r *results.Report) error {
	ordered := inAreaOrder(r.Results)
	for _, res := range ordered[min(s.given, len(ordered)):] {
		s.result(res, revisionNote(r, res))
	}
	if !s.verbose {
		s.t.skips(r, ordered)
	}
	s.t.linef("")
	s.t.teardown(r.Teardown)
	s.t.linef("")
	s.t.schema(r.Schema)
	s.t.changes(r)
	s.t.findings(r, ordered)
	s.t.linef("")
	for _, n := range r.Notes {
		s.t.linef("note: %s", san(n))
	}
	s.t.linef("%s", Summary(r))
	return s.bw.Flush()
}
