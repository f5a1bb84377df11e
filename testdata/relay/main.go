// Command relay is the least a stdio shim can be: it starts the command
// it is given and copies its own stdin to the command's and the
// command's stdout to its own, nothing else. BenchmarkWatchStdioPing
// runs a server behind it to measure what one more process on the path
// costs, the floor under what "mcpflight watch" adds.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: relay COMMAND [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(127)
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		_ = in.Close()
	}()
	_, _ = io.Copy(os.Stdout, out)
	if err := cmd.Wait(); err != nil {
		os.Exit(1)
	}
}
