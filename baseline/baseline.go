// Package baseline compares a run with a list of known failures and
// warnings, so that CI can adopt mcpflight on a server that does not yet
// conform: known failures are shown but do not fail the run, new ones do,
// and so do stale entries (listed failures that now pass), which keeps the
// list honest. It reads and writes the list; it formats nothing.
//
// A baseline file is a JSON array of entries:
//
//	[
//	  {"id": "cancel/mid-work-no-response", "verdict": "warn"},
//	  {"id": "progress/strictly-increasing", "verdict": "fail"},
//	  {"id": "teardown", "verdict": "warn"}
//	]
//
// The ID "teardown" stands for the run's teardown grade, and an ID that
// begins "schema/" for a finding of the run's schema check
// ("schema/InitializeResult/result/serverInfo/name#type").
package baseline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/verdict"
)

// TeardownID is the entry ID of the run's teardown grade.
const TeardownID = "teardown"

// SchemaPrefix begins the entry ID of a schema finding
// (results.SchemaFinding.ID), which is listed as a fail.
const SchemaPrefix = "schema/"

// ErrInvalid is wrapped by the errors of Load for a malformed baseline.
var ErrInvalid = errors.New("baseline: invalid")

// Entry is one known failure or warning.
type Entry struct {
	// ID is a case ID, TeardownID, or a schema finding's ID.
	ID string `json:"id"`
	// Verdict is what the case is known to conclude: fail or warn.
	Verdict verdict.Verdict `json:"verdict"`
}

// Load reads a baseline: a JSON array of entries, each with an ID and a
// verdict of fail or warn, no ID twice, no other fields.
func Load(r io.Reader) ([]Entry, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var entries []Entry
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrInvalid)
	}
	seen := map[string]bool{}
	for i, e := range entries {
		switch {
		case e.ID == "":
			return nil, fmt.Errorf("%w: entry %d has no id", ErrInvalid, i+1)
		case e.Verdict != verdict.Fail && e.Verdict != verdict.Warn:
			return nil, fmt.Errorf("%w: entry %d (%s): verdict %q, want fail or warn", ErrInvalid, i+1, e.ID, e.Verdict)
		case seen[e.ID]:
			return nil, fmt.Errorf("%w: %s is listed twice", ErrInvalid, e.ID)
		}
		seen[e.ID] = true
	}
	return entries, nil
}

// Read loads the baseline file at path.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	defer f.Close()
	entries, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return entries, nil
}

// Write writes entries as a baseline file, one entry a line.
func Write(w io.Writer, entries []Entry) error {
	var b bytes.Buffer
	b.WriteString("[")
	for i, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		b.Write(line)
	}
	if len(entries) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	return nil
}

// FromReport lists every fail and warn of a report (after --strict), in
// the order run, and the teardown grade when it is a fail or warn.
func FromReport(r *results.Report) []Entry {
	entries := []Entry{}
	for _, res := range r.Results {
		if v := res.Outcome.Verdict; v == verdict.Fail || v == verdict.Warn {
			entries = append(entries, Entry{ID: res.ID, Verdict: v})
		}
	}
	if v := r.Teardown.Verdict; v == verdict.Fail || v == verdict.Warn {
		entries = append(entries, Entry{ID: TeardownID, Verdict: v})
	}
	for _, f := range r.Schema.Findings {
		entries = append(entries, Entry{ID: f.ID(), Verdict: verdict.Fail})
	}
	return entries
}

// Compare sets the run against the baseline.
func Compare(r *results.Report, entries []Entry) results.BaselineComparison {
	listed := map[string]verdict.Verdict{}
	for _, e := range entries {
		listed[e.ID] = e.Verdict
	}
	now := map[string]results.BaselineFinding{}
	var order []string
	for _, res := range r.Results {
		if _, dup := now[res.ID]; !dup {
			order = append(order, res.ID)
		}
		now[res.ID] = results.BaselineFinding{ID: res.ID, Listed: listed[res.ID], Now: res.Outcome.Verdict, Summary: res.Outcome.Summary}
	}
	if r.Teardown.Verdict != "" && r.Teardown.Verdict != verdict.Skip {
		order = append(order, TeardownID)
		now[TeardownID] = results.BaselineFinding{ID: TeardownID, Listed: listed[TeardownID], Now: r.Teardown.Verdict, Summary: r.Teardown.Summary}
	}
	for _, f := range r.Schema.Findings {
		if _, dup := now[f.ID()]; !dup {
			order = append(order, f.ID())
			now[f.ID()] = results.BaselineFinding{ID: f.ID(), Listed: listed[f.ID()], Now: verdict.Fail, Summary: f.Requirement + " violated: " + f.String()}
		}
	}
	if r.Schema.Checked > 0 && r.Schema.Err == "" {
		// A listed schema finding this run's check did not find is fixed.
		for _, e := range entries {
			if _, found := now[e.ID]; !found && strings.HasPrefix(e.ID, SchemaPrefix) {
				order = append(order, e.ID)
				now[e.ID] = results.BaselineFinding{ID: e.ID, Listed: e.Verdict, Now: verdict.Pass, Summary: "the schema check no longer finds it"}
			}
		}
	}
	var c results.BaselineComparison
	for _, id := range order {
		f := now[id]
		bad := f.Now == verdict.Fail || f.Now == verdict.Warn
		switch {
		case f.Listed == "" && bad:
			c.Unexpected = append(c.Unexpected, f)
		case f.Listed == "":
		case f.Listed == f.Now:
			c.Known = append(c.Known, f)
		case f.Now == verdict.Fail: // listed as warn
			c.Unexpected = append(c.Unexpected, f)
		case f.Now == verdict.Pass || f.Now == verdict.Warn: // fixed, or a listed fail now a warn
			c.Stale = append(c.Stale, f)
		default: // skip, info, error: no evidence either way
			c.Unchecked = append(c.Unchecked, f)
		}
	}
	for _, e := range entries {
		if _, ran := now[e.ID]; !ran {
			c.Unchecked = append(c.Unchecked, results.BaselineFinding{ID: e.ID, Listed: e.Verdict})
		}
	}
	return c
}
