package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/verdict"
)

func TestCompleteness(t *testing.T) {
	res := func(v verdict.Verdict, summary string) Result {
		return Result{Outcome: verdict.Outcome{Verdict: v, Summary: summary}}
	}
	slow := "profile names no slow tool; pass --profile"
	http := "needs the Streamable HTTP transport; the target uses stdio"
	rev := "applies to 2025-11-25 only"
	both := []Result{res(verdict.Pass, ""), res(verdict.Skip, rev), res(verdict.Skip, "applies to 2026-07-28 only")}
	tests := []struct {
		name    string
		results []Result
		want    Completeness
		exit    int
		line    string
	}{
		{"half ran", []Result{res(verdict.Pass, ""), res(verdict.Skip, slow)},
			Completeness{Selected: 2, Applicable: 2, Ran: 1, NotRun: 1, Reason: slow, ReasonCount: 1, Remedy: remedy(slow)}, 0, ""},
		{"most skipped for the profile", []Result{res(verdict.Pass, ""), res(verdict.Skip, slow), res(verdict.Skip, slow), res(verdict.Skip, "capability \"logging\" not advertised")},
			Completeness{Selected: 4, Applicable: 4, Ran: 1, NotRun: 3, Reason: slow, ReasonCount: 2, Remedy: remedy(slow), Incomplete: true}, ExitIncomplete,
			"incomplete: 3 of 4 applicable cases did not run; 2 of them would run with a profile that names a slow tool (mcpflight profile init drafts one; pass it with --profile)"},
		{"other transport does not count", []Result{res(verdict.Pass, ""), res(verdict.Skip, http), res(verdict.Skip, http)},
			Completeness{Selected: 3, OtherTransport: 2, Applicable: 1, Ran: 1}, 0, ""},
		{"nothing for this revision", []Result{res(verdict.Skip, rev), res(verdict.Skip, rev)},
			Completeness{Selected: 2, OtherRevision: 2, Reason: rev, ReasonCount: 2, Remedy: remedy(rev), Incomplete: true}, ExitIncomplete,
			"incomplete: none of the 2 cases applies to this run; 2 of them would run under 2025-11-25 (--protocol 2025-11-25)"},
		{"cases of the other revision do not count", []Result{res(verdict.Pass, ""), res(verdict.Skip, rev), res(verdict.Skip, rev)},
			Completeness{Selected: 3, OtherRevision: 2, Applicable: 1, Ran: 1}, 0, ""},
		{"none applies", []Result{res(verdict.Skip, http)},
			Completeness{Selected: 1, OtherTransport: 1, Incomplete: true}, ExitIncomplete, "incomplete: none of the 1 cases applies to this run"},
		{"both revisions", both, Completeness{Selected: 3, OtherRevision: 2, Applicable: 1, Ran: 1}, 0, ""},
		{"a fail outranks incomplete", []Result{res(verdict.Fail, ""), res(verdict.Skip, slow), res(verdict.Skip, slow)},
			Completeness{Selected: 3, Applicable: 3, Ran: 1, NotRun: 2, Reason: slow, ReasonCount: 2, Remedy: remedy(slow), Incomplete: true}, 1, ""},
		{"an error outranks incomplete", []Result{res(verdict.Error, ""), res(verdict.Skip, slow), res(verdict.Skip, slow)},
			Completeness{Selected: 3, Applicable: 3, Ran: 1, NotRun: 2, Reason: slow, ReasonCount: 2, Remedy: remedy(slow), Incomplete: true}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Results: tt.results, Teardown: TeardownGrade{Verdict: verdict.Pass}}
			got := r.Completeness()
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Completeness (-want +got):\n%s", d)
			}
			if code := r.ExitCode(); code != tt.exit {
				t.Errorf("exit code %d, want %d", code, tt.exit)
			}
			if tt.line != "" && got.Line() != tt.line {
				t.Errorf("line %q, want %q", got.Line(), tt.line)
			}
		})
	}
}
