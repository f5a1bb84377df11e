package monitor

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/spec"
	"github.com/mcpflight/mcpflight/verdict"
)

// ruleSides are the sides each rule can find broken: a finding of one is
// about that side's own frames.
var ruleSides = map[string][]Side{
	RuleWellFormed:          {Client, Server},
	RuleOneResponse:         {Client, Server},
	RuleNoNotificationRepl:  {Client, Server},
	RuleIDUnique:            {Client, Server},
	RuleCancelNoResponse:    {Server, Client},
	RuleCancelNoProgress:    {Server},
	RuleHandlerStops:        {Server},
	RuleCancelNoLog:         {Server},
	RuleCancelTarget:        {Client, Server},
	RuleCancelInitialize:    {Client},
	RuleCancelTask:          {Client},
	RuleAbandoned:           {Client},
	RuleStreamPrimed:        {Server},
	RuleEventIDs:            {Server},
	RuleStreamRouting:       {Server},
	RuleReplayOwnStream:     {Server},
	RuleStreamEnds:          {Server},
	RuleUnbuffered:          {Server},
	RuleStateless:           {Server},
	RuleSessionIDVisible:    {Server},
	RuleMethodNotFound:      {Server},
	RuleProgressIncreasing:  {Server},
	RuleProgressAfterEnd:    {Server},
	RuleTokenKnown:          {Server},
	RuleTokenUnique:         {Client},
	RuleTaskTerminalStable:  {Server},
	RuleTaskCancelTerminal:  {Server},
	RuleTaskCancelResult:    {Server},
	RuleTaskStillWorking:    {Client},
	RuleTaskTimestamps:      {Server},
	RuleTaskGetAnswer:       {Server},
	RuleTaskIDTruth:         {Server},
	RuleTaskResultMeta:      {Server},
	RuleTaskStatusMeta:      {Server},
	RuleTaskResultStatus:    {Server},
	RuleTaskResultBlocks:    {Server},
	RuleTaskCancelledAsked:  {Server},
	RuleTaskDeclared:        {Server},
	RuleTaskDurable:         {Server},
	RuleLogLevel:            {Server},
	RuleListenAck:           {Server},
	RuleListenID:            {Server},
	RuleListenRequested:     {Server},
	RuleListenEnd:           {Server},
	RulePingAnswered:        {Client, Server},
	RuleInitializedFirst:    {Client},
	RuleLevelAccepted:       {Server},
	RuleTaskRequired:        {Server},
	RuleRemovedMethods:      {Client, Server},
	RuleServerInfo:          {Server},
	RuleVersionRefused:      {Server},
	RuleInitializeNamesVers: {Server},
	RuleEnvelopeComplete:    {Client},
	RuleTaskNameHeader:      {Client},
}

// Sides are the sides the rule can find broken, the ones whose frames it
// judges: a checker that judges only the server takes the rules whose
// Sides hold Server.
func (r Rule) Sides() []Side { return slices.Clone(ruleSides[r.ID]) }

// ResultID is the ID a rule's result has for side in a report:
// "server/progress-increasing", so that a report's areas are the sides.
func ResultID(side Side, ruleID string) string { return string(side) + "/" + ruleID }

// Results turns what the monitor found into one result per rule and side
// judged, in the order of Rules: the worst finding's verdict, with its
// requirement, the first such finding as the evidence and the count of
// the others; pass when the conversation gave the rule something to
// judge and it held; skip, saying so, when it gave it nothing. events,
// when not nil, returns the events around a finding (in its session),
// for a result's diagram.
func (m *Monitor) Results(events func(f Finding) []chrono.Event) []results.Result {
	exercised := m.Exercised()
	m.mu.Lock()
	gapUndecided := maps.Clone(m.gapUndecided)
	tallies := make(map[sideRule]ruleTally, len(m.ruleFindings))
	for k, t := range m.ruleFindings {
		tallies[k] = *t
	}
	m.mu.Unlock()
	spoken := m.revisionsSpoken()
	var out []results.Result
	for _, side := range []Side{Server, Client} {
		if !m.judges(side) {
			continue
		}
		for _, r := range Rules() {
			if !slices.Contains(ruleSides[r.ID], side) {
				continue
			}
			tally, found := tallies[sideRule{side, r.ID}]
			res := results.Result{ID: ResultID(side, r.ID), Title: r.Title, Area: string(side), Reqs: citesOf(r)}
			switch {
			case found:
				worst := tally.worst
				res.Outcome = verdict.Outcome{Verdict: worst.Verdict, Requirement: worst.Requirement, Level: worst.Level,
					Summary: summarize(worst, tally.count), Expected: []string{r.Title}, Actual: worst.Text, ActualSeq: worst.Seq}
				if events != nil {
					res.Events = events(worst)
				}
			case gapUndecided[sideRule{side, r.ID}] > 0:
				res.Outcome = verdict.Infof("undecided: the recording lost frames, and %d findings of this rule after that were not made, since a lost frame could have caused them (docs/robustness.md)",
					gapUndecided[sideRule{side, r.ID}])
			case exercised[res.ID] > 0:
				res.Outcome = verdict.Passf("held %s in the conversation", times(exercised[res.ID]))
			default:
				res.Outcome = m.notExercised(r, spoken)
			}
			out = append(out, res)
		}
	}
	return out
}

// revisionsSpoken are the revisions the conversation's sessions spoke,
// as far as they showed them (Options.Revision when given), oldest
// first.
func (m *Monitor) revisionsSpoken() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, rev := range []string{spec.V20251125, spec.V20260728} {
		if m.spoken[rev] || m.opts.Revision == rev {
			out = append(out, rev)
		}
	}
	return out
}

// notExercised is the skip of a rule the conversation gave nothing to
// judge. One that cannot apply to it says why, in the words a report's
// completeness reads (results.Completeness), so that it is not counted
// as a rule the conversation could have exercised: a Streamable HTTP rule
// of a stdio conversation, a rule of a revision none of its sessions
// spoke.
func (m *Monitor) notExercised(r Rule, spoken []string) verdict.Outcome {
	if httpOnly(r.ID) && m.opts.Transport != "http" {
		tr := m.opts.Transport
		if tr == "" {
			tr = "stdio"
		}
		return verdict.Skipf("needs the http transport; the target uses %s", tr)
	}
	if len(spoken) > 0 && !slices.ContainsFunc(spoken, r.appliesUnder) {
		var revs []string
		for _, rev := range []string{spec.V20251125, spec.V20260728} {
			if r.appliesUnder(rev) {
				revs = append(revs, rev)
			}
		}
		if len(revs) > 0 {
			return verdict.Skipf("applies to %s only", strings.Join(revs, " and "))
		}
	}
	if r.ID == RuleHandlerStops && !m.obs.observing() {
		return verdict.Skipf("needs the observer's readings, which the wire lacks: watch --observer PROFILE reads it (docs/observer.md)")
	}
	return verdict.Skipf("not exercised: the conversation gave it nothing to judge")
}

// appliesUnder reports whether the rule can find something under
// revision: it holds there and cites a requirement of it, or it is an
// alert, which cites none anywhere.
func (r Rule) appliesUnder(revision string) bool {
	if !r.Holds(revision) {
		return false
	}
	return len(r.Cites[revision]) > 0 || len(citesOf(r)) == 0
}

// rank orders the verdicts a finding can have.
func rank(v verdict.Verdict) int {
	switch v {
	case verdict.Fail:
		return 3
	case verdict.Warn:
		return 2
	case verdict.Info:
		return 1
	}
	return 0
}

// summarize is a rule's result summary: its worst finding, and how many
// more there were.
func summarize(f Finding, n int) string {
	s := f.Text
	if f.TaskID != "" && len(f.RequestIDs) > 0 {
		s += fmt.Sprintf(" (task %s; requests %s)", f.TaskID, strings.Join(f.RequestIDs, ", "))
	}
	if n > 1 {
		s += fmt.Sprintf("; %d more findings of this rule", n-1)
	}
	return s
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// citesOf lists every requirement the rule can cite, each once.
func citesOf(r Rule) []string {
	var out []string
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		for _, id := range r.Cites[rev] {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}
