package results

import (
	"strings"

	"github.com/mcpflight/mcpflight/verdict"
)

// RevisionChange is a behaviour that passes under one revision and breaks
// under the other: the same case, run under both, with a pass or info
// under one and a fail or warn under the other.
type RevisionChange struct {
	ID, Title string
	// Verdicts and Summaries are the case's outcome under each revision.
	Verdicts  map[string]verdict.Verdict
	Summaries map[string]string
}

// Broke is the revision under which the behaviour breaks.
func (c RevisionChange) Broke() string {
	for rev, v := range c.Verdicts {
		if v == verdict.Fail || v == verdict.Warn {
			return rev
		}
	}
	return ""
}

// Negotiation is how a run chose its revisions (--protocol): the
// revisions run and why, what each probe saw, and the contradictions
// between the probes' answers.
type Negotiation struct {
	// Mode is what was asked for: "2025-11-25", "2026-07-28", "auto" or
	// "both".
	Mode string
	// Revisions are the revisions run, in order; Reasons says why each.
	Revisions []string
	Reasons   map[string]string
	// Discover and Initialize are the server/discover and initialize
	// probes; nil for a probe not made.
	Discover, Initialize *Probe
	// Inconsistencies are contradictions between the probes' answers.
	Inconsistencies []Inconsistency
	// Server is the server's name as the probes heard it: from
	// server/discover's _meta, else from initialize; nil when neither
	// said.
	Server *Implementation
}

// Probe is what one negotiation probe saw.
type Probe struct {
	// OK is set when the server answered it; Failure says otherwise why,
	// in a few words ("-32601 Method not found").
	OK      bool
	Failure string
	// SupportedVersions are server/discover's; ProtocolVersion is the
	// one initialize agreed.
	SupportedVersions []string
	ProtocolVersion   string
	// Server is the serverInfo the answer carried, nil for none.
	Server *Implementation
}

// Inconsistency is a contradiction between the server's answers, with
// the requirements it bears on.
type Inconsistency struct {
	Summary      string
	Requirements []string
}

// Summary is one line per revision: "REVISION: REASON".
func (n *Negotiation) Summary() string {
	lines := make([]string, 0, len(n.Revisions))
	for _, r := range n.Revisions {
		lines = append(lines, r+": "+n.Reasons[r])
	}
	return strings.Join(lines, "; ")
}

// RevisionOnly counts, per revision, the cases that ran (did not skip)
// under that revision only, in a report of several revisions.
func (r *Report) RevisionOnly() map[string]int {
	ran := map[string]map[string]bool{}
	for _, res := range r.Results {
		if res.Outcome.Verdict == verdict.Skip {
			continue
		}
		if ran[res.ID] == nil {
			ran[res.ID] = map[string]bool{}
		}
		ran[res.ID][res.Revision] = true
	}
	out := map[string]int{}
	for _, revs := range ran {
		if len(revs) == 1 {
			for rev := range revs {
				out[rev]++
			}
		}
	}
	return out
}

// NegotiationLine is the report header's account of the revision: one
// "REVISION: REASON" per revision run, "" for a run that did not
// negotiate.
func (r *Report) NegotiationLine() string {
	if r.Negotiation == nil {
		return ""
	}
	return r.Negotiation.Summary()
}
