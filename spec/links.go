package spec

import (
	"regexp"
	"strings"
)

// Commits of the public repositories the copied spec pages were taken
// from (see the header of REQUIREMENTS.md).
const (
	specCommit     = "b0f60ba5"
	extTasksCommit = "e434597"
)

// Link is a reference to a public spec page for a requirement's Source.
type Link struct {
	// Label is the source key and section as written in the registry,
	// e.g. "25/cancel §Behavior Requirements".
	Label string
	// URL is the public page, with a section anchor when the source names
	// a section; empty when the key is unknown.
	URL string
}

// keyRe matches a source key at the start of a source part: 25/cancel,
// 26/http, ext/tasks, sep2663.
var keyRe = regexp.MustCompile(`^(25|26|ext)/[a-z]+|^sep2663`)

// Links splits a requirement's Source ("25/progress; 26/progress", "25/cancel
// §Behavior Requirements") into one link per cited page. Core pages link to
// modelcontextprotocol.io, schemas to the schema file at the snapshot's
// commit, the tasks extension to its repository at the snapshot's commit.
func Links(source string) []Link {
	var out []Link
	for _, part := range strings.Split(source, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		out = append(out, Link{Label: part, URL: sourceURL(part)})
	}
	return out
}

func sourceURL(part string) string {
	key := keyRe.FindString(part)
	if key == "" {
		return ""
	}
	ver, page, _ := strings.Cut(key, "/")
	switch ver {
	case "25":
		ver = V20251125
	case "26":
		ver = V20260728
	default: // ext/..., sep2663: the tasks extension's repository
		return "https://github.com/modelcontextprotocol/ext-tasks/tree/" + extTasksCommit
	}
	if page == "schema" {
		return "https://github.com/modelcontextprotocol/modelcontextprotocol/blob/" + specCommit + "/schema/" + ver + "/schema.ts"
	}
	path, ok := pages[ver+"/"+page]
	if !ok {
		return ""
	}
	u := "https://modelcontextprotocol.io/specification/" + ver + "/" + path
	if _, section, ok := strings.Cut(part, "§"); ok {
		if a := anchor(section); a != "" {
			u += "#" + a
		}
	}
	return u
}

// pages maps a source key to the page's path under the version, from the
// key table of REQUIREMENTS.md.
var pages = map[string]string{
	"2025-11-25/cancel":     "basic/utilities/cancellation",
	"2025-11-25/progress":   "basic/utilities/progress",
	"2025-11-25/tasks":      "basic/utilities/tasks",
	"2025-11-25/ping":       "basic/utilities/ping",
	"2025-11-25/lifecycle":  "basic/lifecycle",
	"2025-11-25/transports": "basic/transports",
	"2025-11-25/index":      "basic",
	"2025-11-25/logging":    "server/utilities/logging",
	"2026-07-28/cancel":     "basic/patterns/cancellation",
	"2026-07-28/progress":   "basic/patterns/progress",
	"2026-07-28/patterns":   "basic/patterns",
	"2026-07-28/subs":       "basic/patterns/subscriptions",
	"2026-07-28/mrtr":       "basic/patterns/mrtr",
	"2026-07-28/index":      "basic",
	"2026-07-28/versioning": "basic/versioning",
	"2026-07-28/discover":   "server/discover",
	"2026-07-28/transports": "basic/transports",
	"2026-07-28/stdio":      "basic/transports/stdio",
	"2026-07-28/http":       "basic/transports/streamable-http",
	"2026-07-28/logging":    "server/utilities/logging",
	"2026-07-28/changelog":  "changelog",
}

// anchor is the heading slug of a section name, as the documentation site
// makes it: lower case, spaces to hyphens, other punctuation dropped. Only
// the first section named (up to a comma or parenthesis) is used.
func anchor(section string) string {
	section = strings.TrimSpace(section)
	if i := strings.IndexAny(section, ",(/"); i >= 0 {
		section = section[:i]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(section)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}
