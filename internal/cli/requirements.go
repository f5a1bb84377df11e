package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/spec"
)

const requirementsUsage = `Usage: mcpflight requirements [--revision REV] [--level LEVEL] [--area AREA] [--json]

Lists the requirement registry (spec/REQUIREMENTS.md): every normative
sentence of the spec with its ID, its level, the revisions it is in and
its area, the way "conformance list --requirements" does. Rules mcpflight
derives from a spec sentence the registry does not list (spec/DERIVED.md,
IDs such as TSK-D1) are marked "derived". A verdict's
severity comes from the level: MUST and MUST NOT (and DEF) fail, SHOULD
and SHOULD NOT warn, MAY is info.

Flags:
  --revision REV       only the sentences in this revision (2025-11-25,
                       2026-07-28)
  --level LEVEL        only this level; a keyword matches its negation too
                       (must: MUST and MUST NOT)
  --area AREA          only this area, the ID's prefix (CAN, PRG, HTTP, …)
  --json               the requirements as a JSON array
`

// requirementJSON is one requirement as requirements --json prints it.
type requirementJSON struct {
	ID        string   `json:"id"`
	Level     string   `json:"level"`
	Revisions []string `json:"revisions"`
	Area      string   `json:"area"`
	Quote     string   `json:"quote"`
	Source    string   `json:"source"`
	Derived   bool     `json:"derived,omitempty"`
}

// requirementArea is a requirement's area: its ID's prefix.
func requirementArea(id string) string {
	area, _, _ := strings.Cut(id, "-")
	return area
}

// requirementRevisions are the registry's revisions the sentence is in.
func requirementRevisions(r spec.Requirement) []string {
	var out []string
	for _, rev := range []string{spec.V20251125, spec.V20260728} {
		if r.AppliesTo(rev) {
			out = append(out, rev)
		}
	}
	return out
}

func (e Env) requirements(args []string) (int, error) {
	var revision, level, area string
	var asJSON bool
	fs := flag.NewFlagSet("requirements", flag.ContinueOnError)
	fs.StringVar(&revision, "revision", "", "")
	fs.StringVar(&level, "level", "", "")
	fs.StringVar(&area, "area", "", "")
	fs.BoolVar(&asJSON, "json", false, "")
	if done, err := e.parse(fs, requirementsUsage, args); done || err != nil {
		return 0, err
	}
	if revision != "" && revision != spec.V20251125 && revision != spec.V20260728 {
		return 0, usagef(requirementsUsage, "--revision %q: the registry covers %s and %s", chrono.Sanitize(revision, false), spec.V20251125, spec.V20260728)
	}
	var rows []requirementJSON
	areas := map[string]bool{}
	for _, r := range spec.All() {
		a := requirementArea(r.ID)
		areas[a] = true
		switch {
		case revision != "" && !r.AppliesTo(revision):
			continue
		case level != "" && !strings.HasPrefix(strings.ToUpper(r.Level), strings.ToUpper(strings.TrimSpace(level))):
			continue
		case area != "" && !strings.EqualFold(a, area):
			continue
		}
		rows = append(rows, requirementJSON{ID: r.ID, Level: r.Level, Revisions: nonNil(requirementRevisions(r)), Area: a, Quote: r.Quote, Source: r.Source, Derived: r.Derived})
	}
	if area != "" && !areas[strings.ToUpper(area)] {
		return 0, usagef(requirementsUsage, "--area %q: no requirement has it", chrono.Sanitize(area, false))
	}
	if asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if rows == nil {
			rows = []requirementJSON{}
		}
		return 0, enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tREVISIONS\tAREA\tSENTENCE")
	for _, r := range rows {
		quote := r.Quote
		if r.Derived {
			quote = "[derived] " + quote
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Level, strings.Join(r.Revisions, ","), r.Area, clipText(quote, 80))
	}
	if err := tw.Flush(); err != nil {
		return 0, err
	}
	fmt.Fprintf(e.Stdout, "%s\n", plural(len(rows), "requirement", "requirements"))
	return 0, nil
}
