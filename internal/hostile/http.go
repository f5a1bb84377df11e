package hostile

import (
	"net/http"
)

// httpModes are the modes of Handler.
var httpModes = []Info{}

// Handler wraps the reference server's Streamable HTTP handler inner with
// mode's misbehaviour.
func Handler(mode Mode, inner http.Handler) http.Handler {
	return inner
}
