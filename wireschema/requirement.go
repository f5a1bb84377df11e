package wireschema

import (
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/spec"
)

// BaseRule is the requirement a schema violation breaks when no more
// specific row of the registry covers it: "All messages between MCP
// clients and servers MUST follow the JSON-RPC 2.0 specification." The
// registry has no row of its own for "messages match schema.json"; the
// schema is how the specification defines each message's shape, and RPC-2
// is the base rule of both revisions.
const BaseRule = "RPC-2"

// Requirement is the requirement a problem of a message of this kind
// ("request", "notification", "result", "error", or "" for a frame that
// is no JSON-RPC message) breaks under revision: the most specific RPC row
// that covers it and applies to revision, else BaseRule.
//
//   - an error response's code that is not an integer: RPC-13 ("Error
//     codes MUST be integers");
//   - an error response without an error object, code or message, or
//     with a message that is not a string: RPC-12;
//   - a result without resultType, under 2026-07-28: RPC-40;
//   - a request from the server whose id is not a string or integer:
//     RPC-4;
//   - a log level outside the syslog levels: LOG-2;
//   - a task without ttl: TSK-41 ("Receivers MUST include the actual
//     ttl"), without lastUpdatedAt: TSK-39;
//   - a server's tasks capability of the wrong shape: TSK-2 (task
//     augmentation is declared in the capabilities);
//   - anything else: RPC-2.
func Requirement(revision, kind string, p Problem) string {
	id := BaseRule
	switch {
	case kind == "error" && p.Pointer == "/error/code":
		id = "RPC-13"
	case kind == "error" && (p.Pointer == "/error/message" || p.Pointer == "/error" ||
		(p.Pointer == "" && p.Keyword == "required" && strings.Contains(p.Message, `"error"`))):
		id = "RPC-12"
	case kind == "result" && p.Pointer == "/result" && p.Keyword == "required" && strings.Contains(p.Message, `"resultType"`):
		id = "RPC-40"
	case kind == "request" && p.Pointer == "/id":
		id = "RPC-4"
	case strings.Contains(p.KeywordLocation, "/$defs/LoggingLevel/"):
		id = "LOG-2"
	case strings.HasSuffix(p.KeywordLocation, "/$defs/Task/required") && strings.Contains(p.Message, `"ttl"`):
		id = "TSK-41"
	case strings.HasSuffix(p.KeywordLocation, "/$defs/Task/required") && strings.Contains(p.Message, `"lastUpdatedAt"`):
		id = "TSK-39"
	case strings.Contains(p.KeywordLocation, "/$defs/ServerCapabilities/properties/tasks/"):
		id = "TSK-2"
	}
	if !AppliesTo(id, revision) {
		return BaseRule
	}
	return id
}

// AppliesTo reports whether requirement id is in revision's text, by the
// registry's Ver column ("25", "26", "25+26"; "ext" goes with 2026-07-28).
func AppliesTo(id, revision string) bool {
	req, ok := spec.Lookup(id)
	if !ok {
		return false
	}
	vers := strings.Split(req.Versions, "+")
	switch revision {
	case Rev20251125:
		return slices.Contains(vers, "25")
	case Rev20260728:
		return slices.Contains(vers, "26") || slices.Contains(vers, "ext")
	}
	return false
}
