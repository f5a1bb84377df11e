package gosdkcontrol_test

import (
	"context"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpflight/mcpflight/contrib/gosdkcontrol"
	"github.com/mcpflight/mcpflight/mcpflighttest"
	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/transport"
)

// newControlledServer is newServer with the control extension and the
// observer installed; the tool handlers are the same.
func newControlledServer(t testing.TB) (*mcp.Server, *gosdkcontrol.Control) {
	s := newServer()
	ctl := gosdkcontrol.New()
	if err := ctl.Install(s); err != nil {
		t.Fatal(err)
	}
	return s, ctl
}

// serveControlled runs s on in-process pipes through ctl's transport.
func serveControlled(s *mcp.Server, ctl *gosdkcontrol.Control) transport.ServeFunc {
	return func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
		return s.Run(ctx, ctl.Transport(&mcp.IOTransport{Reader: in, Writer: out}))
	}
}

// controlledProfile is exampleProfile with the observer tool.
func controlledProfile() *profile.Profile {
	p := exampleProfile()
	p.Name = "gosdk-example-controlled"
	// Under control the grace window only bounds waits for checkpoints,
	// which end as soon as the checkpoint is reached: a wider one costs
	// nothing and keeps a loaded machine from turning them into errors.
	p.GraceMillis = 3000
	p.Observer = &profile.Observer{Tool: gosdkcontrol.ObserverTool,
		Started: "/started", Completed: "/completed", Cancelled: "/cancelled", LastStep: "/lastStep"}
	return p
}

// TestGoSDKServerWithControl checks the same go-sdk server with the
// control extension: the in-flight cases run on checkpoints instead of
// grace windows, and the cases that need the extension run.
func TestGoSDKServerWithControl(t *testing.T) {
	s, ctl := newControlledServer(t)
	mcpflighttest.Run(t, mcpflighttest.Pipes(serveControlled(s, ctl)), append(knownGoSDK(), mcpflighttest.Profile(controlledProfile()))...)
}
