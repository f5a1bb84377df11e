// Package spec is the requirement registry: every requirement row of
// REQUIREMENTS.md (an ID such as CAN-8, its RFC-2119 level, the versions
// it applies to and the quoted spec sentence), so that verdicts can cite
// the sentence they judge. The file is an unchanged copy of
// ../shared/spec/REQUIREMENTS.md, embedded at build time; DERIVED.md adds
// the few rules mcpflight reads out of a spec sentence that the shared
// registry does not list (their IDs carry a D, as in TSK-D1).
package spec

import (
	_ "embed"
	"strings"
	"sync"
)

// Markdown is the embedded REQUIREMENTS.md.
//
//go:embed REQUIREMENTS.md
var Markdown string

// DerivedMarkdown is the embedded DERIVED.md: rules mcpflight derives from
// a spec sentence that the shared registry does not list as a rule.
//
//go:embed DERIVED.md
var DerivedMarkdown string

// Requirement is one row of a requirement table:
// | ID | Lvl | Ver | Quote | Source | Test | Notes |.
type Requirement struct {
	// ID is the area prefix and number, e.g. "CAN-8".
	ID string `json:"id"`
	// Level is the RFC-2119 keyword of the sentence (MUST, SHOULD NOT,
	// MAY, ...), DEF for a definition, or "should (lc)".
	Level string `json:"level"`
	// Versions says which protocol versions the sentence is in: "25",
	// "26", "25+26" or "ext".
	Versions string `json:"versions"`
	// Quote is the spec sentence, without its surrounding quotes.
	Quote string `json:"quote"`
	// Source names the spec page and section.
	Source string `json:"source"`
	// Testability says which side the checker must play: S, C, S+C, N/T...
	Testability string `json:"testability"`
	// Notes are the registry's testing notes.
	Notes string `json:"notes,omitempty"`
	// Derived marks a rule of DERIVED.md: mcpflight's reading of the
	// quoted sentence, not a row of the shared registry.
	Derived bool `json:"derived,omitempty"`
}

// registry is parsed once, on first use.
var registry = sync.OnceValues(func() ([]Requirement, map[string]int) {
	reqs := Parse(Markdown)
	for _, r := range Parse(DerivedMarkdown) {
		r.Derived = true
		reqs = append(reqs, r)
	}
	index := make(map[string]int, len(reqs))
	for i, r := range reqs {
		index[r.ID] = i
	}
	return reqs, index
})

// Lookup returns the requirement with the given ID.
func Lookup(id string) (Requirement, bool) {
	reqs, index := registry()
	i, ok := index[strings.TrimSpace(id)]
	if !ok {
		return Requirement{}, false
	}
	return reqs[i], true
}

// All returns every requirement in file order. The caller may modify the
// returned slice.
func All() []Requirement {
	reqs, _ := registry()
	return append([]Requirement(nil), reqs...)
}

// Parse extracts the requirement rows from markdown: rows of a table whose
// header is | ID | Lvl | Ver | Quote | Source | Test | Notes |. An escaped
// pipe (\|) inside a cell is kept as a plain "|". Rows with a different
// number of cells, and rows of other tables, are ignored.
func Parse(markdown string) []Requirement {
	var out []Requirement
	inTable := false
	for line := range strings.Lines(markdown) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := splitRow(line)
		if isHeader(cells) {
			inTable = true
			continue
		}
		if !inTable || len(cells) != 7 || isSeparator(cells) {
			continue
		}
		out = append(out, Requirement{
			ID:          cells[0],
			Level:       cells[1],
			Versions:    cells[2],
			Quote:       unquote(cells[3]),
			Source:      cells[4],
			Testability: cells[5],
			Notes:       cells[6],
		})
	}
	return out
}

// splitRow splits a markdown table row into trimmed cells.
func splitRow(line string) []string {
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

func isHeader(cells []string) bool {
	want := []string{"ID", "Lvl", "Ver", "Quote", "Source", "Test", "Notes"}
	if len(cells) != len(want) {
		return false
	}
	for i := range want {
		if cells[i] != want[i] {
			return false
		}
	}
	return true
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" {
			return false
		}
	}
	return true
}

// unquote drops the double quotes around a quoted sentence.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}
