package chrono

import (
	"io"
	"time"
)

// WithStart makes the log's offsets count from start instead of from the
// moment New was called. Logs given the same start share one clock: the
// offsets of their events can be compared, so that the chronologies of
// several sessions can be merged into one sequence (see explore).
func WithStart(start time.Time) Option { return func(l *Log) { l.start = start } }

// WriteEventsJSONL writes events as JSON Lines, one object per line and
// terminal safe (SafeJSON), exactly as WriteJSONL writes a log's: a
// chronology assembled from several logs reads back with ReadJSONL and
// renders with report.Sequence.
func WriteEventsJSONL(w io.Writer, events []Event) error {
	enc := newLineEncoder(w)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}
