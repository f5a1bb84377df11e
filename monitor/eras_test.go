package monitor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
)

// envelope is a 2026-07-28 request's whole _meta, naming version.
func envelope(version string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}`
}

// req26 is request id of method under the envelope naming version, with
// params' other members (a trailing comma included) before it.
func req26(id, method, version, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"%s","params":{%s%s}}`, id, method, params, envelope(version))
}

// info is a 2026-07-28 result's _meta naming the server.
const info = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}`

// answer is the server's answer to request id: a "result" or "error"
// member.
func answer(id, member string) string { return `{"jsonrpc":"2.0","id":` + id + `,` + member + `}` }

// discover26 opens a 2026-07-28 session with server/discover (request 1),
// whose answer lists versions.
func discover26(versions string) *history {
	return (&history{}).c(req26("1", "server/discover", "2026-07-28", "")).
		s(answer("1", `"result":{"resultType":"complete","supportedVersions":`+versions+`,"capabilities":{},`+info+`}`))
}

// taskCancel26 is a 2026-07-28 tasks/cancel of task tid, declaring the
// extension, as request 2.
func taskCancel26(tid string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":"` + tid + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
}

// TestEraRules: the version and envelope rules of 2026-07-28 each break on
// a history that shows the violation, and a history of the same shape
// that conforms, or that the wire cannot decide (a legacy request to a
// dual-era server, a refusal a missing envelope member may explain),
// breaks nothing. Both sides are judged, RPC-56 and LIF-51 too.
func TestEraRules(t *testing.T) {
	unknown := func(envelopeMeta, member string) *history {
		return discover26(`["2026-07-28"]`).c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + envelopeMeta + `}}`).s(answer("2", member))
	}
	refused := `"error":{"code":-32022,"message":"unsupported","data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}`
	initialize := `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name      string
		h         *history
		transport string
		revision  string
		want      []string
	}{
		// PNG-40, TSX-65
		{"ping under 2026-07-28, refused", discover26(`["2026-07-28"]`).c(req26("2", "ping", "2026-07-28", "")).s(answer("2", `"error":{"code":-32601,"message":"Method not found"}`)), "", "",
			[]string{"removed-methods PNG-40 fail client"}},
		{"ping under 2026-07-28, served", discover26(`["2026-07-28"]`).c(req26("2", "ping", "2026-07-28", "")).s(answer("2", `"result":{`+info+`}`)), "", "",
			[]string{"removed-methods PNG-40 fail client", "removed-methods PNG-40 fail server"}},
		{"logging/setLevel under 2026-07-28, served", discover26(`["2026-07-28"]`).c(req26("2", "logging/setLevel", "2026-07-28", `"level":"debug",`)).
			s(answer("2", `"result":{`+info+`}`)), "", "",
			[]string{"removed-methods PNG-40 fail client", "removed-methods PNG-40 fail server"}},
		{"a legacy ping to a dual-era server", discover26(`["2026-07-28","2025-11-25"]`).c(`{"jsonrpc":"2.0","id":2,"method":"ping"}`).s(answer("2", `"result":{}`)), "", "", nil},
		{"tasks/result declaring the extension, served", discover26(`["2026-07-28"]`).
			c(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"T","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`).
			s(answer("2", `"result":{"content":[],`+info+`}`)), "", "",
			[]string{"removed-methods TSX-65 fail server"}},
		{"tasks/result declaring the extension, refused", discover26(`["2026-07-28"]`).
			c(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"T","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`).
			s(answer("2", `"error":{"code":-32601,"message":"Method not found"}`)), "", "", nil},

		// RPC-51
		{"a 2026-07-28 request without clientCapabilities", discover26(`["2026-07-28"]`).
			c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`).
			s(answer("2", `"error":{"code":-32602,"message":"missing clientCapabilities"}`)), "", "",
			[]string{"envelope-complete RPC-51 fail client"}},
		{"a 2026-07-28 request with null clientCapabilities", discover26(`["2026-07-28"]`).
			c(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}}`).
			s(answer("2", `"error":{"code":-32602,"message":"missing clientCapabilities"}`)), "", "",
			[]string{"envelope-complete RPC-51 fail client"}},

		// TSX-52
		{"tasks/cancel with its Mcp-Name", discover26(`["2026-07-28"]`).head(chrono.Out, "POST #2", "POST /mcp MCP-Protocol-Version: 2026-07-28; Mcp-Method: tasks/cancel; Mcp-Name: T1").
			post(2, taskCancel26("T1")), "http", "", nil},
		{"tasks/cancel with its Mcp-Name in Base64", discover26(`["2026-07-28"]`).head(chrono.Out, "POST #2", "POST /mcp MCP-Protocol-Version: 2026-07-28; Mcp-Method: tasks/cancel; Mcp-Name: =?base64?VMOpMQ==?=").
			post(2, taskCancel26("Té1")), "http", "", nil},
		{"tasks/cancel without Mcp-Name", discover26(`["2026-07-28"]`).head(chrono.Out, "POST #2", "POST /mcp MCP-Protocol-Version: 2026-07-28; Mcp-Method: tasks/cancel").
			post(2, taskCancel26("T1")), "http", "",
			[]string{"task-name-header TSX-52 fail client"}},
		{"tasks/cancel naming another task", discover26(`["2026-07-28"]`).head(chrono.Out, "POST #2", "POST /mcp MCP-Protocol-Version: 2026-07-28; Mcp-Method: tasks/cancel; Mcp-Name: T2").
			post(2, taskCancel26("T1")), "http", "",
			[]string{"task-name-header TSX-52 fail client"}},
		{"tasks/cancel whose head was cut", discover26(`["2026-07-28"]`).head(chrono.Out, "POST #2", "POST /mcp MCP-Protocol-Version: 2026-07-28; Mcp-Met… (truncated, 900 bytes)").
			post(2, taskCancel26("T1")), "http", "", nil},
		{"tasks/cancel without a recorded head", discover26(`["2026-07-28"]`).post(2, taskCancel26("T1")), "http", "", nil},

		// RPC-56, LIF-51
		{"every result names the server", discover26(`["2026-07-28"]`).c(req26("2", "tools/list", "2026-07-28", "")).
			s(answer("2", `"result":{"tools":[],`+info+`}`)), "", "", nil},
		{"the key written with an escape", discover26(`["2026-07-28"]`).c(req26("2", "tools/list", "2026-07-28", "")).
			s(answer("2", `"result":{"tools":[],"_meta":{"io.modelcontextprotocol\/serverInfo":{"name":"s","version":"1"}}}`)), "", "", nil},
		{"results without serverInfo", discover26(`["2026-07-28"]`).c(req26("2", "tools/list", "2026-07-28", "")).s(answer("2", `"result":{"tools":[]}`)).
			c(req26("3", "tools/list", "2026-07-28", "")).s(answer("3", `"result":{"tools":[]}`)), "", "",
			[]string{"server-info-in-meta RPC-56 warn server"}},
		{"server/discover without serverInfo", (&history{}).c(req26("1", "server/discover", "2026-07-28", "")).
			s(answer("1", `"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}`)), "", "",
			[]string{"server-info-in-meta LIF-51 warn server"}},
		{"a legacy request's result without serverInfo", discover26(`["2026-07-28","2025-11-25"]`).c(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`).
			s(answer("2", `"result":{"tools":[]}`)), "", "", nil},

		// LIF-40, HTTP-97
		{"an unlisted version refused with -32022", unknown(envelope("1900-01-01"), refused), "", "", nil},
		{"an unlisted version refused with -32602", unknown(envelope("1900-01-01"), `"error":{"code":-32602,"message":"bad version"}`), "", "",
			[]string{"unsupported-version-refused LIF-40 fail server"}},
		{"an unlisted version served", unknown(envelope("1900-01-01"), `"result":{"tools":[]}`), "", "",
			[]string{"unsupported-version-refused LIF-40 fail server"}},
		{"an unlisted version refused with -32022 listing nothing", unknown(envelope("1900-01-01"), `"error":{"code":-32022,"message":"unsupported"}`), "", "",
			[]string{"unsupported-version-refused LIF-40 fail server"}},
		{"an unlisted version without clientCapabilities, refused with -32602", unknown(`"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01"}`,
			`"error":{"code":-32602,"message":"missing clientCapabilities"}`), "", "", nil},
		{"an unlisted version, the headers refused first", unknown(envelope("1900-01-01"), `"error":{"code":-32020,"message":"header mismatch"}`), "", "", nil},
		{"the version server/discover was served under, unlisted", discover26(`["2025-11-25","2025-06-18"]`).c(req26("2", "mcpflight/no-such-method", "2026-07-28", "")).
			s(answer("2", `"error":{"code":-32601,"message":"unsupported"}`)), "", "", nil},
		{"a legacy revision in the envelope, unlisted, served", unknown(envelope("2025-11-25"), `"result":{"tools":[]}`), "", "", nil},
		{"a version refused before any server/discover", (&history{}).c(req26("2", "tools/list", "1900-01-01", "")).s(answer("2", `"error":{"code":-32602,"message":"bad"}`)), "", "", nil},
		{"-32022 with HTTP 400", discover26(`["2026-07-28"]`).post(2, req26("2", "tools/list", "1900-01-01", "")).status(2, 400).frame(chrono.In, "POST #2", answer("2", refused)), "http", "", nil},
		{"-32022 with HTTP 200", discover26(`["2026-07-28"]`).post(2, req26("2", "tools/list", "1900-01-01", "")).status(2, 200).frame(chrono.In, "POST #2", answer("2", refused)), "http", "",
			[]string{"unsupported-version-refused HTTP-97 fail server"}},

		// LIF-49
		{"initialize without initialize", (&history{}).c(initialize).s(answer("9", `"error":{"code":-32601,"message":"Method not found"}`)), "", "2026-07-28",
			[]string{"initialize-error-names-versions LIF-49 warn server"}},
		{"initialize without initialize, naming the versions", (&history{}).c(initialize).s(answer("9", `"error":{"code":-32601,"message":"supported: 2026-07-28"}`)), "", "2026-07-28", nil},
		{"initialize refused with -32022", (&history{}).c(initialize).s(answer("9", refused)), "", "2026-07-28", nil},
		{"initialize refused by a server not known modern-only", (&history{}).c(initialize).s(answer("9", `"error":{"code":-32600,"message":"already initialized"}`)), "", "2026-07-28", nil},
		{"initialize refused by a server whose discover lists modern versions only", discover26(`["2026-07-28"]`).c(initialize).
			s(answer("9", `"error":{"code":-32600,"message":"no"}`)), "", "",
			[]string{"initialize-error-names-versions LIF-49 warn server"}},
		{"initialize refused by a dual-era server", discover26(`["2026-07-28","2025-11-25"]`).c(initialize).
			s(answer("9", `"error":{"code":-32600,"message":"no"}`)), "", "", nil},
		{"initialize without initialize, in a session that never shows 2026-07-28", (&history{}).c(initialize).
			s(answer("9", `"error":{"code":-32601,"message":"Method not found"}`)), "", "", nil},
		{"initialize without initialize, then 2026-07-28", (&history{}).c(initialize).s(answer("9", `"error":{"code":-32601,"message":"Method not found"}`)).
			c(req26("2", "tools/list", "2026-07-28", "")).s(answer("2", `"result":{"tools":[],`+info+`}`)), "", "",
			[]string{"initialize-error-names-versions LIF-49 warn server"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, _, _ := run(tc.h, Options{Transport: tc.transport, Revision: tc.revision, Owned: func(string, string) bool { return false }})
			if got := brief(fs); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("findings\n%s\nwant\n%s\n(texts: %v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), fs)
			}
		})
	}
}
