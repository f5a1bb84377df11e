package report

import "github.com/mcpflight/mcpflight/results"

// Lanes name the two ends of a chronology's sequence diagram: Left sends
// the Out frames (mcpflight), Right the In frames (the target).
type Lanes struct {
	Left, Right string
}

// LanesOf names the lanes for a report's role: checker and server for
// "check"; under check-client (results.RoleClient) mcpflight is the server
// under our control and the target the client under test; in a watched
// conversation (results.RoleConversation) a host talks to its server.
func LanesOf(role string) Lanes {
	switch role {
	case results.RoleClient:
		return Lanes{Left: "server (ours)", Right: "client under test"}
	case results.RoleConversation:
		return Lanes{Left: "host", Right: "server"}
	}
	return Lanes{Left: "checker", Right: "server"}
}

func (l Lanes) orDefault() Lanes {
	if l.Left == "" || l.Right == "" {
		return LanesOf(results.RoleServer)
	}
	return l
}
