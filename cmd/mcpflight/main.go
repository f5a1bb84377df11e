// Command mcpflight is an MCP conformance checker focused on in-flight
// work: progress, cancellation, logging and transports. See the README
// and "mcpflight help".
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpflight/mcpflight/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
