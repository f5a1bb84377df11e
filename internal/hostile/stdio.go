package hostile

import (
	"context"
	"errors"
	"io"

	"github.com/mcpflight/mcpflight/refserver"
)

// stdioModes are the modes of ServeStdio.
var stdioModes = []Info{}

// ServeStdio serves srv over in and out like refserver.Server.Serve, with
// mode's misbehaviour. exitCode is the code the process should exit with
// (non-zero for modes that crash on purpose).
func ServeStdio(ctx context.Context, mode Mode, srv *refserver.Server, in io.Reader, out, errOut io.Writer) (exitCode int, err error) {
	return 0, errors.New("hostile: stdio modes are not implemented yet")
}
