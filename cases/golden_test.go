package cases_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/verdict"
)

// goldenCases are the representative cases whose outbound frames are
// kept in testdata/wire, one txtar archive each (go-sdk's conformance
// style): a change to what a case sends is seen in review even when its
// verdict stays the same. Each is deterministic against the reference
// server: gated by checkpoints, with no polling loop.
var goldenCases = []struct {
	id   string
	http bool
}{
	{id: "rpc/string-and-integer-ids"},
	{id: "cancel/mid-work-no-response"},
	{id: "cancel/invalid-request-id"},
	{id: "progress/token-echo-integer"},
	{id: "logging/level-filter"},
	{id: "tasks/cancel-working"},
	{id: "http/disconnect-is-not-cancel", http: true},
	{id: "http/session-id-required", http: true},
}

// wireNormalisers replace what legitimately varies between runs.
var wireNormalisers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?i)(mcp-session-id: )[!-~]+`), "${1}<session>"},
	{regexp.MustCompile(`(?i)(last-event-id: )[^;]+`), "${1}<event>"},
	{regexp.MustCompile(`task-[0-9a-f]{32}`), "task-<id>"},
	{regexp.MustCompile(`127\.0\.0\.1:[0-9]+`), "127.0.0.1:<port>"},
}

// sentFrames renders what the checker sent in a case's chronology: each
// outbound frame or HTTP request with its channel, normalised.
func sentFrames(events []chrono.Event) string {
	var b strings.Builder
	for _, ev := range events {
		if ev.Dir != chrono.Out || (ev.Kind != chrono.KindFrame && ev.Kind != chrono.KindHTTP) {
			continue
		}
		line := ev.Channel
		if ev.Text != "" {
			line += " " + ev.Text
		}
		b.WriteString(line + "\n")
		if len(ev.Raw) > 0 {
			b.Write(ev.Raw)
			b.WriteString("\n")
		}
	}
	out := b.String()
	for _, n := range wireNormalisers {
		out = n.re.ReplaceAllString(out, n.with)
	}
	return out
}

// txtar writes a txtar archive: a comment, then one file per section.
func txtar(comment string, files ...[2]string) []byte {
	var b bytes.Buffer
	b.WriteString(comment)
	for _, f := range files {
		fmt.Fprintf(&b, "-- %s --\n%s", f[0], f[1])
	}
	return b.Bytes()
}

// txtarFile returns the named file of a txtar archive.
func txtarFile(data []byte, name string) (string, bool) {
	marker := []byte("-- " + name + " --\n")
	i := bytes.Index(data, marker)
	if i < 0 {
		return "", false
	}
	rest := data[i+len(marker):]
	if j := bytes.Index(rest, []byte("\n-- ")); j >= 0 {
		rest = rest[:j+1]
	}
	return string(rest), true
}

// TestWireGoldens: each representative case sends exactly the frames of
// its golden recording; -update rewrites them.
func TestWireGoldens(t *testing.T) {
	prof, err := profile.Builtin("reference")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]probe.Case{}
	for _, c := range cases.All() {
		byID[c.ID] = c
	}
	for _, g := range goldenCases {
		t.Run(g.id, func(t *testing.T) {
			t.Parallel()
			c, ok := byID[g.id]
			if !ok {
				t.Fatalf("no case %s", g.id)
			}
			mk := referenceTarget(nil)
			if g.http {
				mk = referenceHTTPTarget(nil)
			}
			tgt, closeTarget := mk()
			defer closeTarget()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := runner.Run(ctx, runner.Config{Target: tgt, Profile: prof, Cases: []probe.Case{c}, CloseTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			res := rep.Results[0]
			if v := res.Outcome.Verdict; v != verdict.Pass && v != verdict.Info {
				t.Fatalf("%s: %s: %s", g.id, v, res.Outcome.Summary)
			}
			got := sentFrames(res.Events)
			path := filepath.Join("testdata", "wire", strings.ReplaceAll(g.id, "/", "_")+".txtar")
			if *update {
				comment := fmt.Sprintf("What %s sends to the reference server over %s, frame by frame.\n"+
					"Session IDs, event IDs, task IDs and ports are normalised. Refresh with\n"+
					"go test ./cases -run TestWireGoldens -update, and review the diff.\n", g.id, tgt.Transport)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, txtar(comment, [2]string{"sent", got}), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to record it)", err)
			}
			want, ok := txtarFile(data, "sent")
			if !ok {
				t.Fatalf("%s has no sent section", path)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s sends other frames than its golden recording %s (-recorded +now); if the change is meant, run with -update:\n%s", g.id, path, diff)
			}
		})
	}
}
