package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// TestSlowFit: a call that ended before its first progress makes the slow
// tool unfit for the run only when it ended sooner than a long-running
// tool runs and no progress for its token came at all, however late; the
// reason names the tool, how it ended and how soon.
func TestSlowFit(t *testing.T) {
	progress := func(log *chrono.Log, token string) {
		log.Frame(chrono.In, "stdout", []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"`+token+`","progress":1}}`), nil, nil)
	}
	tok := jsonrpc.StringToken("t1")
	for _, tc := range []struct {
		name     string
		call     slowCall
		progress bool
		unfit    bool
	}{
		{"instant, no progress", slowCall{token: tok, took: 3 * time.Millisecond, how: "answered"}, false, true},
		{"instant, progress after its answer", slowCall{token: tok, took: 3 * time.Millisecond, how: "answered"}, true, false},
		{"long, no progress", slowCall{token: tok, took: instantBelow, how: "answered"}, false, false},
		{"instant failure", slowCall{token: tok, took: 5 * time.Millisecond, how: "failed with -32602 bad"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewSlowFit()
			log := chrono.New()
			f.note(log, tc.call)
			if tc.progress {
				progress(log, "t1")
			}
			if _, unfit := f.Unfit(); unfit {
				t.Fatal("unfit before its case settled")
			}
			reason, unfit := f.Settle(log, "quick")
			if unfit != tc.unfit {
				t.Fatalf("unfit %v, want %v (%s)", unfit, tc.unfit, reason)
			}
			if unfit && (!strings.Contains(reason, `"quick" `+tc.call.how+" in") || !strings.Contains(reason, "with no progress")) {
				t.Errorf("reason %q does not say how the tool ended", reason)
			}
			// A later case that saw nothing keeps the run's finding.
			if _, still := f.Settle(chrono.New(), "quick"); still != tc.unfit {
				t.Errorf("a later case's settle says %v", still)
			}
		})
	}
	var none *SlowFit
	if _, unfit := none.Settle(chrono.New(), "x"); unfit {
		t.Error("a nil SlowFit learns nothing")
	}
}
