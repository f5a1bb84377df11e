package report

import (
	"bufio"
	"io"

	"github.com/mcpflight/mcpflight/results"
)

// TextStream writes the text report piece by piece while a run goes on:
// Header once, then Result for each result as it is known, then End with
// the final report. Given the results in the report's order (areas in
// one block each, as the catalogue has them), it writes the bytes Text
// writes for that report. What it writes may stay buffered until Flush
// or End.
type TextStream struct {
	bw      *bufio.Writer
	t       textWriter
	verbose bool
	area    string
	results int
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

// Result writes one result, under its area's title when it opens an area.
// A stream is for a run of one revision: the report of several (Text)
// groups their results by area and names each result's revision.
func (s *TextStream) Result(res results.Result) { s.result(res, "") }

// result writes res, with revision (revisionNote) beside its transport.
func (s *TextStream) result(res results.Result, revision string) {
	if s.results == 0 || res.Area != s.area {
		s.t.linef("")
		s.t.linef("%s", s.t.bold(res.Area))
		s.area = res.Area
	}
	s.results++
	s.t.result(res, s.verbose, revision)
}

// Flush writes what the stream holds.
func (s *TextStream) Flush() error { return s.bw.Flush() }

// End writes the teardown grade, the schema check and the summary line of
// the final report r, and flushes.
func (s *TextStream) End(r *results.Report) error {
	s.t.linef("")
	s.t.teardown(r.Teardown)
	s.t.linef("")
	s.t.schema(r.Schema)
	s.t.changes(r)
	s.t.linef("")
	s.t.linef("%s", Summary(r))
	return s.bw.Flush()
}
