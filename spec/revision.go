package spec

import (
	"regexp"
	"strings"
)

// Protocol revisions. The registry covers V20251125 and V20260728; the
// older ones are published revisions a server may still answer with.
const (
	V20241105 = "2024-11-05"
	V20250326 = "2025-03-26"
	V20250618 = "2025-06-18"
	V20251125 = "2025-11-25"
	V20260728 = "2026-07-28"
)

// Published are every released MCP revision, oldest first.
func Published() []string {
	return []string{V20241105, V20250326, V20250618, V20251125, V20260728}
}

// AppliesTo reports whether the requirement's sentence is in the given
// revision: Ver "25" is 2025-11-25, "26" is 2026-07-28, "25+26" both,
// and "ext" (the tasks extension) is used with 2026-07-28.
func (r Requirement) AppliesTo(revision string) bool {
	for _, v := range strings.Split(r.Versions, "+") {
		switch strings.TrimSpace(v) {
		case "25":
			if revision == V20251125 {
				return true
			}
		case "26", "ext":
			if revision == V20260728 {
				return true
			}
		}
	}
	return false
}

// revisionName matches a revision's name, a date written YYYY-MM-DD,
// within a text; revisionWhole matches a string that is one.
var (
	revisionName  = regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)
	revisionWhole = regexp.MustCompile(`^20[0-9]{2}-[01][0-9]-[0-3][0-9]$`)
)

// NamesRevision reports whether text names a protocol revision (a date
// written YYYY-MM-DD): how an error that is not -32022 can still name
// the versions a server supports (LIF-49).
func NamesRevision(text string) bool { return revisionName.MatchString(text) }

// Modern reports whether revision is of the modern era, 2026-07-28 or
// later, whose versions convey version, identity and capabilities per
// request (26/versioning, Terminology); the legacy era, 2025-11-25 and
// earlier, establishes a session with initialize. A string that is not a
// revision's date is of neither.
func Modern(revision string) bool {
	return revisionWhole.MatchString(revision) && revision >= V20260728
}
