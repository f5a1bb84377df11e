package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/monitor"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// The passive rules. After the cases, every case's chronology is judged
// with the rules watch and judge apply to a live conversation (package
// monitor), on the server's side: whatever the server did in any case,
// progress whenever it sent some, a second response, a response to an ID
// never sent, a task's status after a terminal one. That is how a
// server without a slow tool still has its progress judged when it sends
// progress in the one call a case makes, and how a case about one rule
// does not miss another rule's violation in its chronology.
//
// A case owns the requirements it cites: it judges them in its
// chronology on evidence the wire lacks (the control extension's
// checkpoints, the observer, what it provoked on purpose), so the
// passive rules make no finding under them there. A requirement some
// case already found broken (fail or warn) is owned by the run: the
// same breach seen again in another chronology adds nothing the report
// does not say (a banner before initialize is in every stdio session's
// chronology; one failing case says it). A rule's findings become one
// result in area results.AreaPassive, only when it found something: a
// run whose cases saw everything has no passive result.
//
// A passive result carries no chronology of its own: its summary names
// the case whose chronology shows the finding, with the seq, and that
// chronology is the case's, already in the report once.

// passiveResults judges rs's chronologies with the passive rules and
// returns a result per rule that found a fail or a warn the cases did
// not report.
func passiveResults(cfg Config, rs []results.Result) []results.Result {
	owned := map[string][]string{}
	reported := map[string]bool{} // requirements a case found broken
	for _, res := range rs {
		if v := res.Outcome.Verdict; (v == verdict.Fail || v == verdict.Warn) && res.Outcome.Requirement != "" {
			reported[res.Outcome.Requirement] = true
		}
	}
	m := monitor.New(monitor.Options{
		Sides:     []monitor.Side{monitor.Server},
		Revision:  cfg.Version,
		Transport: cfg.Target.Transport,
		Owned: func(session, requirement string) bool {
			return reported[requirement] || slices.Contains(owned[session], requirement)
		},
	})
	for _, res := range rs {
		if len(res.Events) == 0 {
			continue
		}
		key := res.ID
		owned[key] = res.Reqs
		for _, ev := range res.Events {
			m.Event(key, ev)
		}
		m.EndSession(key)
	}
	var out []results.Result
	shown := map[string]string{} // rule: the case whose chronology shows its worst finding
	evidence := func(f monitor.Finding) []chrono.Event {
		shown[f.Rule] = f.Session
		return nil
	}
	for _, r := range m.Results(evidence) {
		if v := r.Outcome.Verdict; v != verdict.Fail && v != verdict.Warn {
			continue
		}
		rule := strings.TrimPrefix(r.ID, string(monitor.Server)+"/")
		where := passiveWhere(m.RuleSessions(monitor.Server, rule), shown[rule])
		r.ID, r.Area, r.Transport = results.AreaPassive+"/"+rule, results.AreaPassive, cfg.Target.Transport
		r.Outcome.Summary = fmt.Sprintf("in %s: %s", where, r.Outcome.Summary)
		if cfg.Strict && r.Outcome.Verdict == verdict.Warn {
			r.Outcome.Verdict = verdict.Fail
			r.Outcome.Summary += " (warn under --strict)"
		}
		out = append(out, r)
	}
	return out
}

// passiveWhere names the chronologies where a rule's findings are: the
// case shown ("case cancel/x's chronology") and how many others, of
// sessions that made them.
func passiveWhere(sessions int, shown string) string {
	where := fmt.Sprintf("case %s's chronology", shown)
	if others := sessions - 1; others > 0 {
		where += fmt.Sprintf(" (and %d other cases')", others)
	}
	return where
}
