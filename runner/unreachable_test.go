package runner

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/probe"
	"github.com/mcpflight/mcpflight/transport"
)

// TestRunProtocolTargetUnreachable: when the target cannot be started,
// RunProtocol runs nothing and says so once (ErrTargetUnreachable).
func TestRunProtocolTargetUnreachable(t *testing.T) {
	target := StdioTarget("missing", transport.StdioConfig{Argv: []string{"/nonexistent/mcp-server"}})
	rep, err := RunProtocol(context.Background(), Config{Target: target, Cases: []probe.Case{pingCase("u/a"), pingCase("u/b")}},
		negotiate.ModeAuto, negotiate.Options{})
	if rep != nil || !errors.Is(err, ErrTargetUnreachable) || !errors.Is(err, transport.ErrExecutableNotFound) {
		t.Fatalf("report %v, error %v; want none and ErrTargetUnreachable", rep, err)
	}
}
