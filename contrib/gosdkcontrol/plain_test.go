package gosdkcontrol_test

import (
	"testing"

	"github.com/mcpflight/mcpflight/mcpflighttest"
)

// TestGoSDKServer checks a plain go-sdk server, without the control
// extension, in process: the cases fall back to grace windows.
func TestGoSDKServer(t *testing.T) {
	mcpflighttest.Run(t, mcpflighttest.Pipes(serve(newServer())), append(knownGoSDK(), mcpflighttest.Profile(exampleProfile()))...)
}

// knownGoSDK are what mcpflight finds in go-sdk v1.8.0, each checked by
// hand in the chronology: its connection ends at the first line that is
// not a JSON-RPC message (the not-JSON line at seq 7, then "writing
// stdin: io: read/write on closed pipe" for the next ping), where the
// JSON-RPC base rules ask for -32700/-32600 or at least for the line to
// be ignored (RPC-2). A truncated object is read on as the start of a
// JSON value: the next line becomes its "id" and the connection ends at
// the line after that (robust/truncated-then-valid sends two).
func knownGoSDK() []mcpflighttest.Option {
	const reason = "go-sdk v1.8.0 closes the connection on a malformed line (RPC-2)"
	var opts []mcpflighttest.Option
	for _, id := range []string{"robust/not-json", "robust/truncated-then-valid", "robust/empty-batch", "robust/non-object", "robust/wrong-version"} {
		opts = append(opts, mcpflighttest.Known(id, reason))
	}
	return opts
}
