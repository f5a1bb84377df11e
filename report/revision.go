package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// The revision a run spoke, in every format: the header
// names each revision and why it was used (from the negotiation), and
// the contradictions between server/discover and initialize; a report of
// several revisions (--protocol both) names every result's revision and
// ends with what changed between them on this server.

// multiRevision reports whether the report covers several revisions.
func multiRevision(r *results.Report) bool { return len(r.Revisions) > 1 }

// revisionOf is the revision a result ran under.
func revisionOf(r *results.Report, res results.Result) string {
	if res.Revision != "" {
		return res.Revision
	}
	return r.Version
}

// revisionLines are the header's "REVISION: REASON" lines, one per
// revision run, sanitised; none for a run that did not negotiate.
func revisionLines(r *results.Report) []string {
	sv := r.Negotiation
	if sv == nil {
		return nil
	}
	var out []string
	for _, rev := range sv.Revisions {
		out = append(out, san(rev+": "+sv.Reasons[rev]))
	}
	return out
}

// inconsistencyLines are the contradictions the negotiation found, each
// with the requirements it bears on, sanitised.
func inconsistencyLines(r *results.Report) []string {
	if r.Negotiation == nil {
		return nil
	}
	var out []string
	for _, inc := range r.Negotiation.Inconsistencies {
		line := inc.Summary
		if len(inc.Requirements) > 0 {
			line += " [" + strings.Join(inc.Requirements, ", ") + "]"
		}
		out = append(out, san(line))
	}
	return out
}

// inconsistencyPart is the summary line's count of the negotiation's
// inconsistencies, "" for none: they do not change the exit code (the
// catalogue's cases judge them), but a run that found one is never
// called conformant without saying so.
func inconsistencyPart(r *results.Report) string {
	if r.Negotiation == nil || len(r.Negotiation.Inconsistencies) == 0 {
		return ""
	}
	if n := len(r.Negotiation.Inconsistencies); n > 1 {
		return fmt.Sprintf(" — %d inconsistencies between the server's answers", n)
	}
	return " — 1 inconsistency between the server's answers"
}

// negotiation writes the text header's revision lines.
func (t textWriter) negotiation(r *results.Report) {
	for _, l := range revisionLines(r) {
		t.linef("revision %s", l)
	}
	for _, l := range inconsistencyLines(r) {
		t.linef("%s %s", t.paint(verdictColor(verdict.Warn), "INCONSISTENT"), l)
	}
}

// changes writes the "what changed between the revisions" section of a
// report of several revisions.
func (t textWriter) changes(r *results.Report) {
	if !multiRevision(r) {
		return
	}
	t.linef("")
	t.linef("%s", t.bold("what changed between "+strings.Join(r.Revisions, " and ")+" on this server"))
	if len(r.Changes) == 0 {
		t.linef("  no behaviour passes under one revision and breaks under the other")
	}
	for _, c := range r.Changes {
		t.linef("  %s  %s: breaks under %s", san(c.ID), san(c.Title), san(c.Broke()))
		for _, rev := range r.Revisions {
			if v, ok := c.Verdicts[rev]; ok {
				t.linef("%s%s %s  %s", indent, san(rev), t.badge(v), san(c.Summaries[rev]))
			}
		}
	}
	if only := onlyLine(r); only != "" {
		t.linef("  %s", only)
	}
}

// onlyLine says how many cases ran under one revision only.
func onlyLine(r *results.Report) string {
	only := r.RevisionOnly()
	var parts []string
	for _, rev := range r.Revisions {
		if n := only[rev]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s ran under %s only", plural(n, "case"), rev))
		}
	}
	return strings.Join(parts, "; ")
}

// JSONNegotiation is how the revision was chosen (results.Report's
// Negotiation): one entry per revision run with its reason, what each
// probe saw, and the contradictions between them.
type JSONNegotiation struct {
	// Mode is --protocol: "2025-11-25", "2026-07-28", "auto" or "both".
	Mode      string             `json:"mode"`
	Revisions []JSONRevisionRun  `json:"revisions"`
	Discover  *JSONProbe         `json:"discover,omitempty"`
	Init      *JSONProbe         `json:"initialize,omitempty"`
	Conflicts []JSONInconsistent `json:"inconsistencies"`
}

// JSONRevisionRun is one revision the run used and why.
type JSONRevisionRun struct {
	Revision string `json:"revision"`
	Reason   string `json:"reason"`
}

// JSONProbe is one probe: server/discover or initialize. On success it
// carries what the server said (supportedVersions, or the agreed
// protocolVersion, and serverInfo); on failure, why in a few words.
type JSONProbe struct {
	OK                bool        `json:"ok"`
	Failure           string      `json:"failure,omitempty"`
	SupportedVersions []string    `json:"supportedVersions,omitempty"`
	ProtocolVersion   string      `json:"protocolVersion,omitempty"`
	Server            *JSONServer `json:"server,omitempty"`
}

// JSONInconsistent is a contradiction between the server's answers.
type JSONInconsistent struct {
	Summary      string   `json:"summary"`
	Requirements []string `json:"requirements"`
}

// JSONChange is a behaviour that passes under one revision and breaks
// under the other (results.RevisionChange).
type JSONChange struct {
	ID        string                     `json:"id"`
	Title     string                     `json:"title"`
	BreaksIn  string                     `json:"breaksUnder"`
	Verdicts  map[string]verdict.Verdict `json:"verdicts"`
	Summaries map[string]string          `json:"summaries"`
}

func jsonProbe(p *results.Probe) *JSONProbe {
	if p == nil {
		return nil
	}
	out := &JSONProbe{OK: p.OK, Failure: jsonText(p.Failure), SupportedVersions: jsonTexts(p.SupportedVersions),
		ProtocolVersion: jsonText(p.ProtocolVersion)}
	if si := p.Server; si != nil {
		out.Server = &JSONServer{Name: jsonText(si.Name), Title: jsonText(si.Title), Version: jsonText(si.Version)}
	}
	return out
}

func jsonNegotiation(r *results.Report) *JSONNegotiation {
	sv := r.Negotiation
	if sv == nil {
		return nil
	}
	out := &JSONNegotiation{Mode: string(sv.Mode), Revisions: []JSONRevisionRun{}, Conflicts: []JSONInconsistent{},
		Discover: jsonProbe(sv.Discover), Init: jsonProbe(sv.Initialize)}
	for _, rev := range sv.Revisions {
		out.Revisions = append(out.Revisions, JSONRevisionRun{Revision: rev, Reason: jsonText(sv.Reasons[rev])})
	}
	for _, inc := range sv.Inconsistencies {
		out.Conflicts = append(out.Conflicts, JSONInconsistent{Summary: jsonText(inc.Summary), Requirements: slices.Clone(inc.Requirements)})
	}
	return out
}

func jsonChanges(r *results.Report) []JSONChange {
	if !multiRevision(r) {
		return nil
	}
	out := []JSONChange{}
	for _, c := range r.Changes {
		j := JSONChange{ID: c.ID, Title: jsonText(c.Title), BreaksIn: c.Broke(), Verdicts: map[string]verdict.Verdict{}, Summaries: map[string]string{}}
		for rev, v := range c.Verdicts {
			j.Verdicts[rev] = v
			j.Summaries[rev] = jsonText(c.Summaries[rev])
		}
		out = append(out, j)
	}
	return out
}

// htmlRevisionHeader are the HTML header's revision entries.
func htmlRevisionHeader(r *results.Report) []kv {
	var out []kv
	for _, l := range revisionLines(r) {
		out = append(out, kv{"revision", l})
	}
	for _, l := range inconsistencyLines(r) {
		out = append(out, kv{"inconsistent", l})
	}
	return out
}

// htmlChanges is the HTML section of what changed between revisions.
type htmlChanges struct {
	Revisions string
	Changes   []htmlChange
	Only      string
}

type htmlChange struct {
	ID, Title, Broke string
	Runs             []htmlChangeRun
}

type htmlChangeRun struct {
	Revision, Verdict, Summary, Anchor string
}

func htmlChangesOf(r *results.Report) *htmlChanges {
	if !multiRevision(r) {
		return nil
	}
	out := &htmlChanges{Revisions: strings.Join(r.Revisions, " and "), Only: onlyLine(r)}
	for _, c := range r.Changes {
		hc := htmlChange{ID: san(c.ID), Title: san(c.Title), Broke: san(c.Broke())}
		for _, rev := range r.Revisions {
			if v, ok := c.Verdicts[rev]; ok {
				hc.Runs = append(hc.Runs, htmlChangeRun{Revision: san(rev), Verdict: string(v), Summary: san(c.Summaries[rev]), Anchor: anchorID(c.ID + "@" + rev)})
			}
		}
		out.Changes = append(out.Changes, hc)
	}
	return out
}

// resultAnchor is a result's HTML anchor: its ID, and in a report of
// several revisions its revision too, so that each run has its own.
func resultAnchor(r *results.Report, res results.Result) string {
	if multiRevision(r) {
		return anchorID(res.ID + "@" + revisionOf(r, res))
	}
	return anchorID(res.ID)
}

// revisionNote is what a result line adds after its transport in a
// report of several revisions: ", 2026-07-28".
func revisionNote(r *results.Report, res results.Result) string {
	if !multiRevision(r) {
		return ""
	}
	return ", " + san(revisionOf(r, res))
}
