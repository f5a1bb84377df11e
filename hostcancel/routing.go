package hostcancel

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/transport"
)

// maxRoutedBody bounds the request body RoutingHeaders reads to find the
// method and the task ID; a larger body is sent without them.
const maxRoutedBody = 1 << 20

// RoutingHeaders wraps an HTTP round tripper so that every JSON-RPC
// request it carries has the 2026-07-28 routing headers: Mcp-Method, and
// Mcp-Name set to params.taskId for tasks/get, tasks/update and
// tasks/cancel (TSX-52) and to params.name for tools/call (HTTP-100),
// Base64-encoded when the value is not plain ASCII (HTTP-101). A header
// the request already has is left as it is: the project's HTTP transport
// sets both itself on a 2026-07-28 session (transport.Switcher2026), so the
// wrapper is for a host whose HTTP client does not, which passes
// &http.Client{Transport: RoutingHeaders(nil)} as its client. A nil base
// is http.DefaultTransport.
func RoutingHeaders(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return routing{base}
}

type routing struct{ base http.RoundTripper }

func (r routing) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.GetBody == nil || req.ContentLength > maxRoutedBody {
		return r.base.RoundTrip(req)
	}
	body, err := req.GetBody()
	if err != nil {
		return r.base.RoundTrip(req)
	}
	raw, err := io.ReadAll(io.LimitReader(body, maxRoutedBody+1))
	body.Close()
	if err != nil || len(raw) > maxRoutedBody {
		return r.base.RoundTrip(req)
	}
	method, name := routeOf(raw)
	if method == "" {
		return r.base.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(raw))
	if out.Header.Get(HeaderMethod) == "" {
		out.Header.Set(HeaderMethod, transport.EncodeHeaderValue(method))
	}
	if name != "" && out.Header.Get(HeaderName) == "" {
		out.Header.Set(HeaderName, transport.EncodeHeaderValue(name))
	}
	return r.base.RoundTrip(out)
}

// routeOf returns the method of a JSON-RPC request and the value Mcp-Name
// carries for it, if any.
func routeOf(raw []byte) (method, name string) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			TaskID *string `json:"taskId"`
			Name   *string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Method == "" {
		return "", ""
	}
	switch m.Method {
	case mcp.MethodTasksGet, mcp.MethodTasksUpdate, mcp.MethodTasksCancel:
		if m.Params.TaskID != nil {
			name = *m.Params.TaskID
		}
	case mcp.MethodToolsCall:
		if m.Params.Name != nil {
			name = *m.Params.Name
		}
	}
	return m.Method, name
}
