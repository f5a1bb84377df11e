package report

import (
	"bufio"
	"io"

	"github.com/mcpflight/mcpflight/results"
)

// Result writes one case's result as the text report prints it: the
// verdict, ID and title, then the summary, or for a fail, warn or error
// the requirement with its sentence, every expected alternative and the
// actual event with its sequence number. The chronology is left to
// Sequence or Chronology. Untrusted text is sanitised.
func Result(w io.Writer, res results.Result) error {
	t := textWriter{w: bufio.NewWriter(w)}
	t.result(res, false, "")
	return t.w.Flush()
}

// Teardown writes a run's teardown grade as the text report prints it:
// the verdict and summary, the requirement a warn or fail cites, and the
// sessions by the rung of the shutdown ladder they needed.
func Teardown(w io.Writer, g results.TeardownGrade) error {
	t := textWriter{w: bufio.NewWriter(w)}
	t.teardown(g)
	return t.w.Flush()
}
