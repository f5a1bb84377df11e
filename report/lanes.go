package report

import "github.com/mcpflight/mcpflight/runner"

// Lanes name the two ends of a chronology's sequence diagram: Left sends
// the Out frames (mcpflight), Right the In frames (the target).
type Lanes struct {
	Left, Right string
}

// LanesOf names the lanes for a report's role: checker and server for
// "check"; under check-client (runner.RoleClient) mcpflight is the server
// under our control and the target the client under test.
func LanesOf(role string) Lanes {
	if role == runner.RoleClient {
		return Lanes{Left: "server (ours)", Right: "client under test"}
	}
	return Lanes{Left: "checker", Right: "server"}
}

func (l Lanes) orDefault() Lanes {
	if l.Left == "" || l.Right == "" {
		return LanesOf(runner.RoleServer)
	}
	return l
}
