package gosdkcontrol_test

import (
	"testing"

	"github.com/mcpflight/mcpflight/mcpflighttest"
)

// TestGoSDKServer checks a plain go-sdk server, without the control
// extension, in process: the cases fall back to grace windows.
func TestGoSDKServer(t *testing.T) {
	mcpflighttest.Run(t, mcpflighttest.Pipes(serve(newServer())), mcpflighttest.Profile(exampleProfile()))
}
