// Command httpserve is a tiny HTTP server for the tests of the servers
// mcpflight starts itself (check --url URL --serve CMD). It
// answers every request with 200 and writes one line per request on
// stderr. -mode picks how it behaves:
//
//	ok           listens on -http; exits 0 on SIGTERM, saying so on stderr
//	never-listen says it is starting, then never listens; exits on SIGTERM
//	exit         says it cannot start and exits with code 3 at once
//	ignore-term  listens on -http and ignores SIGTERM (only SIGKILL ends it)
//	spawn        listens on -http and starts a copy of itself in mode
//	             ignore-term-child, which ignores SIGTERM in the same
//	             process group; the parent exits on SIGTERM
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	mode := flag.String("mode", "ok", "ok, never-listen, exit, ignore-term or spawn")
	addr := flag.String("http", "127.0.0.1:0", "the address to listen on")
	flag.Parse()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	switch *mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "httpserve: fatal: no configuration found")
		os.Exit(3)
	case "never-listen":
		fmt.Fprintln(os.Stderr, "httpserve: starting, waiting for a database that never comes")
		<-term
		fmt.Fprintln(os.Stderr, "httpserve: got SIGTERM, exiting")
		return
	case "ignore-term-child":
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "httpserve child: running, ignoring SIGTERM")
		for {
			time.Sleep(time.Hour)
		}
	case "ok", "ignore-term", "spawn":
	default:
		fmt.Fprintln(os.Stderr, "httpserve: unknown mode", *mode)
		os.Exit(2)
	}
	if *mode == "ignore-term" {
		signal.Ignore(syscall.SIGTERM)
	}
	if *mode == "spawn" {
		child := exec.Command(os.Args[0], "-mode", "ignore-term-child")
		child.Stderr = os.Stderr
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "httpserve:", err)
			os.Exit(2)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpserve:", err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "httpserve: listening on http://%s/mcp\n", ln.Addr())
	var n atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(os.Stderr, "httpserve: request %d: %s %s\n", n.Add(1), r.Method, r.URL.Path)
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = srv.Serve(ln) }()
	<-term
	fmt.Fprintln(os.Stderr, "httpserve: got SIGTERM, exiting")
}
