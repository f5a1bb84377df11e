package baseline

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// run builds a report with the given verdicts, in order, and teardown.
func run(teardown verdict.Verdict, verdicts ...string) *results.Report {
	r := &results.Report{Counts: map[verdict.Verdict]int{}, Teardown: results.TeardownGrade{Verdict: teardown, Summary: "td"}}
	for _, s := range verdicts {
		id, v, _ := strings.Cut(s, "=")
		r.Results = append(r.Results, results.Result{ID: id, Outcome: verdict.Outcome{Verdict: verdict.Verdict(v), Summary: id + " said " + v}})
		r.Counts[verdict.Verdict(v)]++
	}
	return r
}

func ids(fs []results.BaselineFinding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.ID+":"+string(f.Listed)+">"+string(f.Now))
	}
	return out
}

func TestCompare(t *testing.T) {
	entries := []Entry{
		{"a/known-fail", verdict.Fail},
		{"a/known-warn", verdict.Warn},
		{"a/fixed", verdict.Fail},
		{"a/milder", verdict.Fail},
		{"a/worse", verdict.Warn},
		{"a/skipped", verdict.Fail},
		{"a/errored", verdict.Fail},
		{"a/not-run", verdict.Fail},
		{TeardownID, verdict.Warn},
	}
	tests := []struct {
		name                              string
		rep                               *results.Report
		known, unexpected, stale, unknown []string
		exit                              int
		empty                             bool // compare with an empty baseline
	}{
		{
			name: "mixed",
			rep: run(verdict.Warn, "a/known-fail=fail", "a/known-warn=warn", "a/fixed=pass", "a/milder=warn", "a/worse=fail",
				"a/skipped=skip", "a/errored=error", "a/new-fail=fail", "a/new-warn=warn", "a/pass=pass"),
			known:      []string{"a/known-fail:fail>fail", "a/known-warn:warn>warn", "teardown:warn>warn"},
			unexpected: []string{"a/worse:warn>fail", "a/new-fail:>fail", "a/new-warn:>warn"},
			stale:      []string{"a/fixed:fail>pass", "a/milder:fail>warn"},
			unknown:    []string{"a/skipped:fail>skip", "a/errored:fail>error", "a/not-run:fail>"},
			exit:       1,
		},
		{
			name:    "only known failures",
			rep:     run(verdict.Warn, "a/known-fail=fail", "a/known-warn=warn", "a/pass=pass"),
			known:   []string{"a/known-fail:fail>fail", "a/known-warn:warn>warn", "teardown:warn>warn"},
			unknown: []string{"a/fixed:fail>", "a/milder:fail>", "a/worse:warn>", "a/skipped:fail>", "a/errored:fail>", "a/not-run:fail>"},
			exit:    0,
		},
		{
			name:  "a stale entry alone fails the run",
			rep:   run(verdict.Pass, "a/known-fail=fail", "a/fixed=pass"),
			known: []string{"a/known-fail:fail>fail"},
			stale: []string{"a/fixed:fail>pass", "teardown:warn>pass"},
			unknown: []string{"a/known-warn:warn>", "a/milder:fail>", "a/worse:warn>", "a/skipped:fail>",
				"a/errored:fail>", "a/not-run:fail>"},
			exit: 1,
		},
		{
			name:       "a new warn alone does not fail the run; an error still exits 2",
			rep:        run(verdict.Pass, "b/new-warn=warn", "b/broke=error"),
			unexpected: []string{"b/new-warn:>warn"},
			exit:       2,
			empty:      true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := entries
			if tt.empty {
				es = nil
			}
			c := Compare(tt.rep, es)
			for _, p := range []struct {
				what      string
				want, got []string
			}{
				{"known", tt.known, ids(c.Known)}, {"unexpected", tt.unexpected, ids(c.Unexpected)},
				{"stale", tt.stale, ids(c.Stale)}, {"unchecked", tt.unknown, ids(c.Unchecked)},
			} {
				if p.want == nil {
					p.want = []string{}
				}
				if diff := cmp.Diff(p.want, p.got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", p.what, diff)
				}
			}
			if got := c.ExitCode(tt.rep); got != tt.exit {
				t.Errorf("exit code %d, want %d", got, tt.exit)
			}
		})
	}
}

func TestWriteLoadRoundTrip(t *testing.T) {
	rep := run(verdict.Warn, "x/a=fail", "x/b=pass", "x/c=warn", "x/d=error")
	entries := FromReport(rep)
	want := []Entry{{"x/a", verdict.Fail}, {"x/c", verdict.Warn}, {TeardownID, verdict.Warn}}
	if diff := cmp.Diff(want, entries); diff != "" {
		t.Fatalf("FromReport (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := Write(&buf, entries); err != nil {
		t.Fatal(err)
	}
	wantText := "[\n  {\"id\":\"x/a\",\"verdict\":\"fail\"},\n  {\"id\":\"x/c\",\"verdict\":\"warn\"},\n  {\"id\":\"teardown\",\"verdict\":\"warn\"}\n]\n"
	if buf.String() != wantText {
		t.Errorf("Write = %q", buf.String())
	}
	got, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
	// A clean run writes an empty list, which loads.
	buf.Reset()
	if err := Write(&buf, FromReport(run(verdict.Pass, "x/a=pass"))); err != nil || buf.String() != "[]\n" {
		t.Errorf("empty baseline %q, %v", buf.String(), err)
	}
	if got, err := Load(&buf); err != nil || len(got) != 0 {
		t.Errorf("Load(empty) = %v, %v", got, err)
	}
}

func TestLoadRejects(t *testing.T) {
	for _, in := range []string{
		``, `{}`, `[{"id":"a","verdict":"pass"}]`, `[{"id":"","verdict":"fail"}]`,
		`[{"id":"a","verdict":"fail"},{"id":"a","verdict":"warn"}]`, `[{"id":"a","verdict":"fail","why":"x"}]`,
		`[] []`,
	} {
		if _, err := Load(strings.NewReader(in)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Load(%q) = %v, want ErrInvalid", in, err)
		}
	}
}

// TestSchemaFindings checks that a schema finding is listed like a fail:
// unexpected when not in the baseline, known when listed, and stale once
// a schema check that ran no longer finds it.
func TestSchemaFindings(t *testing.T) {
	finding := results.SchemaFinding{SchemaViolation: results.SchemaViolation{Definition: "InitializeResult", Requirement: "RPC-2",
		Pointer: "/result/serverInfo/name", Keyword: "type"}}
	const id = "schema/InitializeResult/result/serverInfo/name#type"
	withFinding := run(verdict.Pass, "a/ok=pass")
	withFinding.Schema = results.SchemaReport{Checked: 3, Findings: []results.SchemaFinding{finding}}
	clean := run(verdict.Pass, "a/ok=pass")
	clean.Schema = results.SchemaReport{Checked: 3}

	if diff := cmp.Diff([]Entry{{id, verdict.Fail}}, FromReport(withFinding)); diff != "" {
		t.Errorf("FromReport (-want +got):\n%s", diff)
	}
	c := Compare(withFinding, nil)
	if diff := cmp.Diff([]string{id + ":>fail"}, ids(c.Unexpected)); diff != "" || c.ExitCode(withFinding) != 1 {
		t.Errorf("not listed: unexpected (-want +got):\n%s\nexit %d", diff, c.ExitCode(withFinding))
	}
	listed := []Entry{{id, verdict.Fail}}
	c = Compare(withFinding, listed)
	if diff := cmp.Diff([]string{id + ":fail>fail"}, ids(c.Known)); diff != "" || c.ExitCode(withFinding) != 0 {
		t.Errorf("listed: known (-want +got):\n%s\nexit %d", diff, c.ExitCode(withFinding))
	}
	c = Compare(clean, listed)
	if diff := cmp.Diff([]string{id + ":fail>pass"}, ids(c.Stale)); diff != "" || c.ExitCode(clean) != 1 {
		t.Errorf("fixed: stale (-want +got):\n%s\nexit %d", diff, c.ExitCode(clean))
	}
}
