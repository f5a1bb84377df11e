package spec

import "strings"

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
