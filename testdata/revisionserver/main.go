// Command revisionserver is internal/revisionsrv as a process, for the
// command line's negotiation tests: over stdio by default, or with -http
// ADDR over Streamable HTTP on ADDR (its URL is then the first line of
// stdout). -mode picks the server (revisionsrv.Modes).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/mcpflight/mcpflight/internal/revisionsrv"
)

func main() {
	mode := flag.String("mode", string(revisionsrv.Only2026), "the server's behaviour (see internal/revisionsrv)")
	addr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	flag.Parse()
	m := revisionsrv.Mode(*mode)
	if *addr == "" {
		if err := revisionsrv.Serve(m, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	_ = http.Serve(ln, revisionsrv.Handler(m))
}
