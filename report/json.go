package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// Schema identifies the JSON report format. A change that removes or
// renames a field, or changes a field's meaning, gets a new version;
// fields may be added within a version.
const Schema = "mcpflight.report/v1"

// JSONReport is the document JSON writes, schema "mcpflight.report/v1".
// Durations are integer nanoseconds, in fields whose names end in "Ns".
// Strings from the target are written as received, JSON-escaped: invalid
// UTF-8 is replaced by U+FFFD, and control characters (C0 and C1) and
// bidirectional controls are \u escapes, so that the document itself is
// safe to print; a consumer that prints a decoded string to a terminal
// must still sanitise it. A string longer than MaxJSONText is cut at a
// character boundary and marked "… (truncated, N bytes)", and an
// event's raw bytes are bounded by chrono.DefaultMaxRaw (with
// "truncated" set and "size" the full length), as a run's chronology
// already is.
type JSONReport struct {
	// Schema is always "mcpflight.report/v1".
	Schema string `json:"schema"`
	// Target is the server under test (the client, under check-client).
	Target JSONTarget `json:"target"`
	// Role is "client" when the target is a client under test and
	// mcpflight played the server (check-client); absent otherwise.
	Role string `json:"role,omitempty"`
	// Server is the serverInfo of the first successful handshake, or null.
	Server *JSONServer `json:"server"`
	// ProtocolVersion is the protocol version tested.
	ProtocolVersion string `json:"protocolVersion"`
	// Profile names the target profile used ("" for none).
	Profile string `json:"profile"`
	// Strict says whether warns were turned into fails.
	Strict bool `json:"strict"`
	// Started is the start of the run, RFC 3339 with nanoseconds, UTC.
	Started string `json:"started"`
	// DurationNs is the run's wall time.
	DurationNs int64 `json:"durationNs"`
	// ExitCode is the process exit code: 0 conformant, 1 a fail (of a
	// case, the teardown, or a schema finding), 2 an error or an
	// interruption without a fail, 3 incomplete (no fail and no error,
	// but fewer than half of the applicable cases ran; added within v1).
	ExitCode int `json:"exitCode"`
	// Conformant is true when ExitCode is 0.
	Conformant bool `json:"conformant"`
	// Interrupted is true when the run was stopped before every case
	// ran; the results are then partial.
	Interrupted bool `json:"interrupted"`
	// Counts has one entry per verdict (pass, fail, warn, info, skip,
	// error), zero counts included.
	Counts map[verdict.Verdict]int `json:"counts"`
	// Teardown is the separate teardown grade.
	Teardown JSONTeardownGrade `json:"teardown"`
	// Baseline is the run set against a baseline (--baseline), absent
	// without one. With a baseline the process exits with its ExitCode,
	// not the report's.
	Baseline *JSONBaseline `json:"baseline,omitempty"`
	// SchemaCheck is the schema check of every inbound message of the run
	// against the revision's official schema.json: each distinct
	// violation once, with its first case and seq and how often it was
	// seen. A finding makes the run non-conformant (exitCode 1). Added
	// within v1.
	SchemaCheck JSONSchemaCheck `json:"schemaCheck"`
	// ProtocolVersions are the revisions the report covers, in the order
	// run: one, or two under --protocol both (protocolVersion then joins
	// them). Added within v1.
	ProtocolVersions []string `json:"protocolVersions,omitempty"`
	// Negotiation is how the revisions were chosen: each with its reason,
	// what the server/discover and initialize probes saw, and the
	// inconsistencies between them. Absent for a run that did not
	// negotiate. Added within v1.
	Negotiation *JSONNegotiation `json:"negotiation,omitempty"`
	// RevisionChanges are the behaviours that pass under one revision and
	// break under the other; present when the report covers several
	// revisions. Added within v1.
	RevisionChanges []JSONChange `json:"revisionChanges,omitempty"`
	// Completeness says how much of the catalogue the run exercised, and
	// whether that makes it incomplete (exitCode 3). Added within v1.
	Completeness JSONCompleteness `json:"completeness"`
	// NoSession, when present, says why no session with the target could
	// be opened: the run ran no case, and this is its one outcome (exit
	// code 2). Its strings come from the target, sanitised.
	NoSession *results.NoSession `json:"noSession,omitempty"`
	// Notes are what the run learned about how it could test the target
	// that no verdict says (the profile's slow tool answered at once with
	// no progress), one sentence each. Added within v1.
	Notes []string `json:"notes,omitempty"`
	// ServedServer is the HTTP server mcpflight started for the run
	// (check --serve) and stopped at its end: the one record of what it
	// printed, since it serves every case, several at a time; a case's
	// events hold only the lines that name its session, and a note
	// counting all the lines printed while it was connected. Absent when
	// mcpflight started no server. Added within v1.
	ServedServer *JSONServedServer `json:"servedServer,omitempty"`
	// Results holds one entry per case, in the order run. It is the last
	// member, which lets JSON stream it.
	Results []JSONResult `json:"results"`
}

// JSONCompleteness is results.Completeness: a run is incomplete when, with
// no fail and no error, fewer than half of the cases that apply to the
// target's transport and the run's revision ran (a skip did not run), or
// none applied.
type JSONCompleteness struct {
	// Incomplete is true when the threshold was not reached.
	Incomplete bool `json:"incomplete"`
	// Applicable counts the selected cases minus those for another
	// transport (otherTransport) or revision (otherRevision).
	Applicable     int `json:"applicable"`
	OtherTransport int `json:"otherTransport"`
	// OtherRevision counts the cases skipped because they apply only to
	// another revision than the one they ran under.
	OtherRevision int `json:"otherRevision"`
	// Ran and NotRun split Applicable.
	Ran    int `json:"ran"`
	NotRun int `json:"notRun"`
	// Reason is the most common skip reason, ReasonCount how many cases
	// gave it, and Remedy what would let them run ("" when the reason
	// says it all).
	Reason      string `json:"reason,omitempty"`
	ReasonCount int    `json:"reasonCount,omitempty"`
	Remedy      string `json:"remedy,omitempty"`
	// Line is the sentence the text report's summary ends with when the
	// run is incomplete; "" otherwise.
	Line string `json:"line,omitempty"`
	// NotApplicable counts the cases the profile put out of scope (it
	// states the server has no tool they need); Scope says which and
	// why, so that a conformant run is never read as a full pass.
	NotApplicable int    `json:"notApplicable,omitempty"`
	Scope         string `json:"scope,omitempty"`
}

// jsonCompleteness converts the run's completeness.
func jsonCompleteness(r *results.Report) JSONCompleteness {
	c := r.Completeness()
	out := JSONCompleteness{Incomplete: c.Incomplete && r.ExitCode() == results.ExitIncomplete, Applicable: c.Applicable, OtherTransport: c.OtherTransport, OtherRevision: c.OtherRevision,
		Ran: c.Ran, NotRun: c.NotRun, Reason: jsonText(c.Reason), ReasonCount: c.ReasonCount, Remedy: c.Remedy,
		NotApplicable: c.NotApplicable, Scope: jsonText(c.Scope())}
	if out.Incomplete {
		out.Line = c.Line()
	}
	return out
}

// JSONBaseline is a run set against a baseline file (baseline.Compare).
type JSONBaseline struct {
	// File is the baseline's path as given.
	File string `json:"file"`
	// Known are listed entries the run confirmed; they do not change the
	// exit code.
	Known []JSONFinding `json:"known"`
	// Unexpected are fails and warns not listed, or worse than listed.
	Unexpected []JSONFinding `json:"unexpected"`
	// Stale are listed entries that no longer hold (update the baseline).
	Stale []JSONFinding `json:"stale"`
	// Unchecked are listed entries this run has no verdict on.
	Unchecked []JSONFinding `json:"unchecked"`
	// ExitCode is the process exit code the baseline gives: 0 no
	// unexpected fail and no stale entry, 1 otherwise, 2 inconclusive.
	ExitCode int `json:"exitCode"`
}

// JSONFinding is one case in a baseline comparison.
type JSONFinding struct {
	ID string `json:"id"`
	// Listed is the verdict in the baseline, "" when not listed.
	Listed verdict.Verdict `json:"listed"`
	// Now is this run's verdict, "" when the case did not run.
	Now verdict.Verdict `json:"now"`
	// Summary is this run's one-line summary of the case.
	Summary string `json:"summary,omitempty"`
}

// jsonBaseline converts a comparison for the JSON report.
func jsonBaseline(r *results.Report, c results.BaselineComparison, file string) *JSONBaseline {
	conv := func(fs []results.BaselineFinding) []JSONFinding {
		out := make([]JSONFinding, 0, len(fs))
		for _, f := range fs {
			out = append(out, JSONFinding{ID: f.ID, Listed: f.Listed, Now: f.Now, Summary: jsonText(f.Summary)})
		}
		return out
	}
	return &JSONBaseline{File: jsonText(file), Known: conv(c.Known), Unexpected: conv(c.Unexpected),
		Stale: conv(c.Stale), Unchecked: conv(c.Unchecked), ExitCode: c.ExitCode(r)}
}

// JSONServedServer is results.ServedServer.
type JSONServedServer struct {
	// Command is the server's command line as it was run.
	Command string `json:"command"`
	// Events is the server's chronology (chrono.Event as JSON, as a
	// result's): its start, the readiness check, its stderr and stdout
	// lines within its budget (the first ones, a note counting those
	// past it, and the last few), its end.
	Events []chrono.Event `json:"events"`
}

// jsonServed converts the run's served server, nil for none.
func jsonServed(s *results.ServedServer) *JSONServedServer {
	if s == nil {
		return nil
	}
	return &JSONServedServer{Command: jsonText(s.Command), Events: jsonEvents(s.Events)}
}

// JSONTarget names the target and its transport.
type JSONTarget struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
}

// JSONServer is the server's self-description from initialize.
type JSONServer struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// JSONTeardownGrade is results.TeardownGrade.
type JSONTeardownGrade struct {
	// Verdict is pass, warn, fail, error, or skip when no session opened.
	Verdict verdict.Verdict `json:"verdict"`
	// Requirement is the requirement a warn or fail cites, or "", in the
	// words of the run's revision.
	Requirement string `json:"requirement,omitempty"`
	// Advice is a later revision's requirement on the same point, cited
	// as advice and not as the run's rule (STD-46 on a 2025-11-25 run).
	// Added within v1.
	Advice   string `json:"advice,omitempty"`
	Summary  string `json:"summary"`
	Sessions int    `json:"sessions"`
	// Worst is the furthest rung needed: none, close-stdin, SIGTERM,
	// SIGKILL; "" with no session.
	Worst results.Step `json:"worst"`
	// Steps counts sessions by the rung they needed.
	Steps     map[results.Step]int `json:"steps"`
	Leftovers int                  `json:"leftovers"`
	Errors    []string             `json:"errors"`
	SlowestNs int64                `json:"slowestNs"`
}

// JSONResult is one case's result.
type JSONResult struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Area         string   `json:"area"`
	Requirements []string `json:"requirements"`
	Transport    string   `json:"transport"`
	// Verdict, Summary, Requirement, Expected, Actual and ActualSeq are
	// the case's outcome (verdict.Outcome); ActualSeq is the sequence
	// number of the first wrong event in Events, 0 for an absence.
	Verdict     verdict.Verdict `json:"verdict"`
	Summary     string          `json:"summary"`
	Requirement string          `json:"requirement,omitempty"`
	// Level (the registry's level that decided the verdict, or the
	// clause of a compound one), Exception (the case's written reason
	// when the verdict departs from Level) and Blame (the helper step
	// and the case that owns its rule, on an error) were added to v1.
	Level     string         `json:"level,omitempty"`
	Exception string         `json:"exception,omitempty"`
	Blame     *verdict.Blame `json:"blame,omitempty"`
	// Unexercised marks a skip whose case reached the target but could
	// not exercise its rule (verdict.Unexercised).
	Unexercised bool     `json:"unexercised,omitempty"`
	Expected    []string `json:"expected,omitempty"`
	Actual      string   `json:"actual,omitempty"`
	ActualSeq   uint64   `json:"actualSeq,omitempty"`
	DurationNs  int64    `json:"durationNs"`
	// Revision is the protocol revision the case ran under. Added within
	// v1.
	Revision string `json:"revision,omitempty"`
	// Teardown is null when the case opened no connection, or handed
	// it on.
	Teardown *JSONTeardown `json:"teardown"`
	// ContinuedFrom names the case that opened the session this case
	// went on with, and HandedOn is set when the case's session went on
	// to another case (over stdio, tidy cases share server processes;
	// --isolate). Added within v1.
	ContinuedFrom string `json:"continuedFrom,omitempty"`
	HandedOn      bool   `json:"handedOn,omitempty"`
	// Events is the case's chronology: chrono.Event as JSON, with the
	// frame's bytes as a string in "raw".
	Events []chrono.Event `json:"events"`
}

// JSONTeardown is one connection's transport.Teardown.
type JSONTeardown struct {
	// ExitedAfter is the last rung of the shutdown ladder needed: none
	// (it had exited before), close-stdin, SIGTERM or SIGKILL.
	ExitedAfter results.Step `json:"exitedAfter"`
	// WaitedNs is the time from the first rung to the exit.
	WaitedNs int64 `json:"waitedNs"`
	// ExitCode is the process's exit code, -1 when a signal ended it,
	// and Signal names that signal.
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	// Leftovers counts the target's processes alive after teardown.
	Leftovers int `json:"leftovers"`
	// Error says why the teardown itself failed, if it did.
	Error string `json:"error,omitempty"`
}

// MaxJSONText bounds one string of the JSON report: the bound of an
// event's raw bytes in the chronology.
const MaxJSONText = chrono.DefaultMaxRaw

// jsonText cuts s to MaxJSONText.
func jsonText(s string) string { return clipText(s, MaxJSONText) }

// jsonTexts is jsonText of every string of ss, in a new slice.
func jsonTexts(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = jsonText(s)
	}
	return out
}

// jsonEvents copies events with every text cut to MaxJSONText and the
// raw bytes to chrono.DefaultMaxRaw.
func jsonEvents(events []chrono.Event) []chrono.Event {
	out := make([]chrono.Event, len(events))
	for i, e := range events {
		out[i] = jsonEvent(e)
	}
	return out
}

// jsonEvent is e with every text cut to MaxJSONText and the raw bytes to
// chrono.DefaultMaxRaw.
func jsonEvent(e chrono.Event) chrono.Event {
	{
		e.Channel, e.Text, e.From, e.To = jsonText(e.Channel), jsonText(e.Text), jsonText(e.From), jsonText(e.To)
		if len(e.Raw) > chrono.DefaultMaxRaw {
			e.Size = max(e.Size, len(e.Raw))
			e.Raw, e.Truncated = e.Raw[:chrono.DefaultMaxRaw], true
		}
		if e.Summary != nil {
			sum := *e.Summary
			sum.Method, sum.ID, sum.Token, sum.RequestID, sum.Malformed = jsonText(sum.Method), jsonText(sum.ID),
				jsonText(sum.Token), jsonText(sum.RequestID), jsonText(sum.Malformed)
			e.Summary = &sum
		}
	}
	return e
}

// Document converts a report to the JSON document's structure.
func Document(r *results.Report) JSONReport {
	return document(r, true)
}

// document converts a report, with or without the results' events.
func document(r *results.Report, events bool) JSONReport {
	doc := JSONReport{
		Schema:          Schema,
		Target:          JSONTarget{Name: jsonText(r.Target), Transport: r.Transport},
		Role:            r.Role,
		ProtocolVersion: r.Version,
		Profile:         r.Profile,
		Strict:          r.Strict,
		Started:         r.Started.UTC().Format(time.RFC3339Nano),
		DurationNs:      int64(r.Duration),
		ExitCode:        r.ExitCode(),
		NoSession:       r.NoSession,
		Notes:           jsonTexts(r.Notes),
		Interrupted:     r.Interrupted,
		Counts:          map[verdict.Verdict]int{},
		Teardown: JSONTeardownGrade{
			Verdict:     r.Teardown.Verdict,
			Requirement: r.Teardown.Requirement,
			Advice:      r.Teardown.Advice,
			Summary:     jsonText(r.Teardown.Summary),
			Sessions:    r.Teardown.Sessions,
			Worst:       r.Teardown.Worst,
			Steps:       map[results.Step]int{},
			Leftovers:   r.Teardown.Leftovers,
			Errors:      append([]string{}, jsonTexts(r.Teardown.Errors)...),
			SlowestNs:   int64(r.Teardown.Slowest),
		},
		SchemaCheck:      jsonSchemaCheck(r.Schema),
		Completeness:     jsonCompleteness(r),
		ProtocolVersions: r.Revisions,
		Negotiation:      jsonNegotiation(r),
		RevisionChanges:  jsonChanges(r),
		ServedServer:     jsonServed(r.Served),
		Results:          make([]JSONResult, 0, len(r.Results)),
	}
	doc.Conformant = doc.ExitCode == 0
	if r.Server != nil {
		doc.Server = &JSONServer{Name: jsonText(r.Server.Name), Title: jsonText(r.Server.Title), Version: jsonText(r.Server.Version)}
	}
	for _, v := range verdictOrder {
		doc.Counts[v] = r.Counts[v]
	}
	for s, n := range r.Teardown.Steps {
		doc.Teardown.Steps[s] = n
	}
	for _, res := range r.Results {
		jr := JSONResult{
			ID:            res.ID,
			Title:         res.Title,
			Area:          res.Area,
			Requirements:  append([]string{}, res.Reqs...),
			Transport:     res.Transport,
			Verdict:       res.Outcome.Verdict,
			Summary:       jsonText(res.Outcome.Summary),
			Requirement:   res.Outcome.Requirement,
			Level:         res.Outcome.Level,
			Exception:     res.Outcome.Exception,
			Blame:         jsonBlame(res.Outcome.Blame),
			Unexercised:   res.Outcome.Unexercised,
			Expected:      jsonTexts(res.Outcome.Expected),
			Actual:        jsonText(res.Outcome.Actual),
			ActualSeq:     res.Outcome.ActualSeq,
			DurationNs:    int64(res.Duration),
			Revision:      res.Revision,
			ContinuedFrom: res.ContinuedFrom,
			HandedOn:      res.HandedOn,
			Events:        []chrono.Event{},
		}
		if events {
			jr.Events = jsonEvents(res.Events)
		}
		if res.HadSession() {
			td := res.Teardown
			jr.Teardown = &JSONTeardown{
				ExitedAfter: td.ExitedAfter,
				WaitedNs:    int64(td.Waited),
				ExitCode:    td.ExitCode,
				Signal:      td.Signal,
				Leftovers:   td.Leftovers,
			}
			if td.Err != "" {
				jr.Teardown.Error = jsonText(td.Err)
			}
		}
		doc.Results = append(doc.Results, jr)
	}
	return doc
}

// JSON writes the report as one indented JSON document (see JSONReport).
//
// The document is streamed event by event, with the same bytes as
// encoding Document(r) at once: a chronology at its cap (hundreds of
// thousands of events) is never held in memory a second time as JSON.
func JSON(w io.Writer, r *results.Report) error {
	return writeJSONDoc(w, r, nil)
}

// JSONWithBaseline is JSON with the run set against a baseline read from
// file (JSONReport.Baseline).
func JSONWithBaseline(w io.Writer, r *results.Report, c results.BaselineComparison, file string) error {
	return writeJSONDoc(w, r, jsonBaseline(r, c, file))
}

func writeJSONDoc(w io.Writer, r *results.Report, base *JSONBaseline) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := writeJSON(bw, r, base); err != nil {
		return fmt.Errorf("report: writing JSON: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: writing JSON: %w", err)
	}
	return nil
}

// The members streamed, which are the last of their objects.
var (
	resultsMember = []byte(`"results": [`)
	eventsMember  = []byte(`"events": [`)
)

func writeJSON(w *bufio.Writer, r *results.Report, base *JSONBaseline) error {
	doc := document(r, false)
	doc.Baseline = base
	results := doc.Results
	doc.Results = []JSONResult{}
	head, err := indented(doc, "")
	if err != nil {
		return err
	}
	if len(results) == 0 {
		_, err := w.Write(append(head, '\n'))
		return err
	}
	_, _ = w.Write(head[:bytes.LastIndex(head, resultsMember)+len(resultsMember)])
	for i, jr := range results {
		_, _ = w.WriteString("\n    ")
		if err := writeResult(w, jr, r.Results[i].Events); err != nil {
			return err
		}
		if i < len(results)-1 {
			_ = w.WriteByte(',')
		}
	}
	_, err = w.WriteString("\n  ]\n}\n")
	return err
}

// writeResult writes one result, its events streamed, at the depth of an
// element of "results".
func writeResult(w *bufio.Writer, jr JSONResult, events []chrono.Event) error {
	body, err := indented(jr, "    ")
	if err != nil {
		return err
	}
	if len(events) == 0 {
		_, err := w.Write(body)
		return err
	}
	_, _ = w.Write(body[:bytes.LastIndex(body, eventsMember)+len(eventsMember)])
	for i, ev := range events {
		_, _ = w.WriteString("\n        ")
		b, err := indented(jsonEvent(ev), "        ")
		if err != nil {
			return err
		}
		_, _ = w.Write(b)
		if i < len(events)-1 {
			_ = w.WriteByte(',')
		}
	}
	_, err = w.WriteString("\n      ]\n    }")
	return err
}

// indented encodes v as the document's encoder would at a nesting whose
// lines begin with prefix, without the trailing newline.
func indented(v any, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return chrono.SafeJSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// jsonBlame is b with its text bounded like every other value.
func jsonBlame(b *verdict.Blame) *verdict.Blame {
	if b == nil {
		return nil
	}
	return &verdict.Blame{Step: jsonText(b.Step), Requirement: jsonText(b.Requirement), Case: jsonText(b.Case)}
}
