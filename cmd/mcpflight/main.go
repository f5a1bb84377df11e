// Command mcpflight is an MCP conformance checker focused on in-flight
// work: progress, cancellation, logging and transports. See the README
// and "mcpflight help".
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpflight/mcpflight/internal/cli"
)

// interruptGrace is how long mcpflight may take to wind down after the
// first interrupt (cancels, teardown ladders) before it exits regardless.
const interruptGrace = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		// Interrupted: the transports have already killed the targets'
		// process groups; if winding down wedges, still leave.
		time.Sleep(interruptGrace)
		fmt.Fprintf(os.Stderr, "mcpflight: still running %v after the interrupt; exiting\n", interruptGrace)
		os.Exit(2)
	}()
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
