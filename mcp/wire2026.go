package mcp

// Wire names of MCP 2026-07-28 (the modern era) that the client side
// needs beyond those in mcp.go: the methods Mcp-Name is derived from,
// the result's resultType key and the Streamable HTTP request-metadata headers.

// Methods whose params name a tool, resource or prompt (Mcp-Name,
// HTTP-100), and the extension's task method that the core lacks.
const (
	MethodResourcesRead = "resources/read"
	MethodPromptsGet    = "prompts/get"
)

// ResultTypeKey is the member of every 2026-07-28 result that says how to
// read it (RPC-40).
const ResultTypeKey = "resultType"

// The values of resultType are in mcp.go (ResultTypeComplete, …). A
// client that did not declare the tasks extension does not recognise
// ResultTypeTask (RPC-42, RPC-43).

// Streamable HTTP request-metadata headers of 2026-07-28 (HTTP-95,
// HTTP-100). The header names are compared case-insensitively (HTTP-102).
const (
	// HeaderProtocolVersion mirrors _meta's protocolVersion on every POST
	// (HTTP-95, HTTP-96). 2025-11-25 sends it too, after initialize.
	HeaderProtocolVersion = "MCP-Protocol-Version"
	// HeaderMethod mirrors the JSON-RPC method on every request.
	HeaderMethod = "Mcp-Method"
	// HeaderName mirrors params.name (tools/call, prompts/get),
	// params.uri (resources/read) or params.taskId (tasks/get,
	// tasks/update, tasks/cancel: TSX-52).
	HeaderName = "Mcp-Name"
	// HeaderParamPrefix starts the name of a header that mirrors a tool
	// argument marked x-mcp-header in the tool's inputSchema.
	HeaderParamPrefix = "Mcp-Param-"
	// HeaderSessionID and HeaderLastEventID are 2025-11-25's session and
	// resumption headers; a 2026-07-28 request carries neither (HTTP-107).
	HeaderSessionID   = "Mcp-Session-Id"
	HeaderLastEventID = "Last-Event-Id"
)

// Base64Prefix and Base64Suffix enclose a header value that cannot be
// sent as plain ASCII (HTTP-101): Mcp-Name: =?base64?…?=.
const (
	Base64Prefix = "=?base64?"
	Base64Suffix = "?="
)

// LogLevels are the logging levels, least severe first (RFC 5424), which
// io.modelcontextprotocol/logLevel and notifications/message carry.
func LogLevels() []string {
	return []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
}
