// Package hostile is mcpflight's zoo of hostile MCP servers: the reference
// server with one deliberate, transport-level misbehaviour (garbage on
// stdout, a 100 MB line, a server that ignores SIGTERM, a 1 GB SSE event,
// a redirect loop, ...). Unlike refserver faults, which break one protocol
// contract in an otherwise well-formed way, hostile modes attack the
// checker itself: they prove that mcpflight ends within its deadlines,
// stays within bounded memory, leaves no process behind and still gives
// every case a clear verdict.
//
// "mcpflight serve --stdio --hostile MODE" and "mcpflight serve --http ADDR
// --hostile MODE" run them; "mcpflight serve --list-hostile" lists them.
package hostile

import (
	"fmt"
	"slices"
	"strings"
)

// Mode names one misbehaviour.
type Mode string

// Transports a mode applies to (Info.Transport).
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// Info describes one mode.
type Info struct {
	// Mode is the mode's name, as given to --hostile.
	Mode Mode
	// Transport is TransportStdio or TransportHTTP.
	Transport string
	// Description says what the server does, in one line.
	Description string
}

// All lists every mode, stdio ones first, each group in name order.
func All() []Info {
	var out []Info
	for _, group := range [][]Info{stdioModes, httpModes} {
		g := slices.Clone(group)
		slices.SortFunc(g, func(a, b Info) int { return strings.Compare(string(a.Mode), string(b.Mode)) })
		out = append(out, g...)
	}
	return out
}

// Lookup finds the mode called name among those of transport.
func Lookup(name, transport string) (Info, error) {
	var names []string
	for _, in := range All() {
		if in.Transport != transport {
			continue
		}
		if string(in.Mode) == name {
			return in, nil
		}
		names = append(names, string(in.Mode))
	}
	return Info{}, fmt.Errorf("unknown %s hostile mode %q (known: %s)", transport, name, strings.Join(names, ", "))
}
