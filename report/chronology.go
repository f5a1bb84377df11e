package report

import (
	"bufio"
	"io"

	"github.com/mcpflight/mcpflight/chrono"
)

// Chronology writes events one per line, as the verbose text report
// prints a case's chronology, with every untrusted byte sanitised.
func Chronology(w io.Writer, events []chrono.Event) error {
	t := textWriter{w: bufio.NewWriter(w)}
	t.chronology(events)
	return t.w.Flush()
}
