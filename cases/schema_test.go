package cases_test

import (
	"slices"
	"testing"

	"github.com/mcpflight/mcpflight/cases"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/refserver"
	"github.com/mcpflight/mcpflight/runner"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
	"github.com/mcpflight/mcpflight/wireschema"
)

// TestToolsListSchemaCitesResultType: under 2026-07-28 a tools/list page
// without resultType breaks ListToolsResult, and the schema check names
// RPC-40 for it; rpc/tools-list-schema declares that rule there, so the
// run ends in a fail citing RPC-40, not in an error naming a harness
// bug. Under 2025-11-25 the same fault is no breach: resultType
// is not 2025-11-25's.
func TestToolsListSchemaCitesResultType(t *testing.T) {
	var c probe.Case
	for _, k := range cases.All() {
		if k.ID == "rpc/tools-list-schema" {
			c = k
		}
	}
	if c.ID == "" {
		t.Fatal("no case rpc/tools-list-schema")
	}
	// Every rule the schema check can name for a result of each revision
	// the case applies to is one the case declares.
	for _, rev := range []string{spec.V20251125, spec.V20260728} {
		for _, p := range []wireschema.Problem{
			{Pointer: "/result", Keyword: "required", Message: `missing required member "resultType"`},
			{Pointer: "/result/tools/0/name", Keyword: "type", Message: "want string"},
		} {
			if id := wireschema.Requirement(rev, "result", p); !slices.Contains(c.ReqsFor(rev), id) {
				t.Errorf("under %s the schema check names %s for %+v, which the case does not declare (%v)", rev, id, p, c.ReqsFor(rev))
			}
		}
	}
	prof, err := profile.Builtin("reference")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rev  string
		want verdict.Verdict
		req  string
	}{{spec.V20260728, verdict.Fail, "RPC-40"}, {spec.V20251125, verdict.Pass, ""}} {
		t.Run(tc.rev, func(t *testing.T) {
			mk := referenceTarget(refserver.FaultSet{refserver.FaultNoResultType: true})
			rep, err := runEach(mk, runner.Config{Profile: prof, Cases: []probe.Case{c}, Version: tc.rev})
			if err != nil {
				t.Fatal(err)
			}
			o := rep.Results[0].Outcome
			if o.Verdict != tc.want || o.Requirement != tc.req {
				t.Errorf("%s %s: %s; want %s %s", o.Verdict, o.Requirement, o.Summary, tc.want, tc.req)
			}
		})
	}
}
