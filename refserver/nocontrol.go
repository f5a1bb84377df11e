package refserver

import (
	"strconv"

	"github.com/mcpflight/mcpflight/mcp"
)

// capabilities are coreCapabilities less the control extension when the
// server hides it (Options.HideControl): a target that offers no
// checkpoints, for the tests of the catalogue's wire-only evidence.
// The extension's methods still answer; nothing that reads
// the capabilities knows of them.
func (s *Server) capabilities() map[string]any {
	caps := coreCapabilities()
	if s.opts.HideControl {
		exp := caps["experimental"].(map[string]any)
		delete(exp, mcp.ControlCapability)
		if len(exp) == 0 {
			delete(caps, "experimental")
		}
	}
	return caps
}

// freeKey is the key an operation or task gets when the server hides the
// control extension: a client that knows nothing of keys sends the same
// arguments, hence the same key, with every call, so a key in use gets
// a suffix ("w#2") instead of -32602. taken reports a key in use; the
// caller holds the locks it reads.
func (s *Server) freeKey(key string, taken func(string) bool) string {
	if !s.opts.HideControl {
		return key
	}
	k := key
	for n := 2; taken(k); n++ {
		k = key + "#" + strconv.Itoa(n)
	}
	return k
}
