package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/transport"
)

// headerFlags are the --header and --header-env flags of a command that
// takes an HTTP target.
type headerFlags struct {
	header    stringList // "Name: value"
	headerEnv stringList // "Name=VARIABLE"
}

func (h *headerFlags) register(fs *flag.FlagSet) {
	fs.Var(&h.header, "header", "")
	fs.Var(&h.headerEnv, "header-env", "")
}

func (h headerFlags) given() bool { return len(h.header)+len(h.headerEnv) > 0 }

// reservedHeaders are the headers the transport owns: a user's value
// would break the protocol exchange or the HTTP framing.
var reservedHeaders = map[string]bool{
	transport.HeaderSessionID:       true,
	transport.HeaderProtocolVersion: true,
	transport.HeaderLastEventID:     true,
	mcp.HeaderMethod:                true,
	mcp.HeaderName:                  true,
	"Content-Type":                  true,
	"Accept":                        true,
	"Content-Length":                true,
	"Transfer-Encoding":             true,
	"Connection":                    true,
	"Upgrade":                       true,
	"Te":                            true,
	"Trailer":                       true,
	"Host":                          true,
}

// validHeaderName reports whether name is an HTTP token (RFC 9110 §5.1).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// headerValueProblem says what makes value unfit for a header, or "".
// It never quotes the value: it may be a secret.
func headerValueProblem(value string) string {
	if value == "" {
		return "the value is empty"
	}
	for i := 0; i < len(value); i++ {
		switch c := value[i]; {
		case c == '\r' || c == '\n':
			return "the value contains a line break (CR or LF), which would inject headers"
		case c < 0x20 && c != '\t', c == 0x7f:
			return fmt.Sprintf("the value contains the control byte 0x%02x", c)
		}
	}
	return ""
}

// checkHeaderName validates a header name the user gave with flag.
func checkHeaderName(flagName, name string) error {
	if !validHeaderName(name) {
		return fmt.Errorf("%s: %q is not a valid header name", flagName, chrono.Sanitize(name, false))
	}
	if reservedHeaders[http.CanonicalHeaderKey(name)] {
		return fmt.Errorf("%s: %s is set by mcpflight's transport itself and cannot be overridden", flagName, http.CanonicalHeaderKey(name))
	}
	return nil
}

// validEnvName reports whether name is a portable environment variable
// name.
func validEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// resolveHeaders turns --header and --header-env into the headers to
// send, and registers every value with the redactor so that no output
// shows it. Errors are usage errors that name the header, never its
// value.
func (e Env) resolveHeaders(h headerFlags, usage string) (http.Header, error) {
	if !h.given() {
		return nil, nil
	}
	out := http.Header{}
	add := func(flagName, name, value string) error {
		if err := checkHeaderName(flagName, name); err != nil {
			return usagef(usage, "%v", err)
		}
		if p := headerValueProblem(value); p != "" {
			return usagef(usage, "%s: header %s: %s", flagName, http.CanonicalHeaderKey(name), p)
		}
		out.Add(name, value)
		e.addSecret(name, value)
		return nil
	}
	for i, hv := range h.header {
		name, value, ok := strings.Cut(hv, ":")
		if !ok {
			// The argument is not quoted back: it may be all secret.
			return nil, usagef(usage, "--header #%d: want 'NAME: VALUE' (no colon found)", i+1)
		}
		if err := add("--header", strings.TrimSpace(name), strings.TrimSpace(value)); err != nil {
			return nil, err
		}
	}
	for _, he := range h.headerEnv {
		name, variable, ok := strings.Cut(he, "=")
		name, variable = strings.TrimSpace(name), strings.TrimSpace(variable)
		if !ok || !validEnvName(variable) {
			return nil, usagef(usage, "--header-env %q: want NAME=VARIABLE, e.g. Authorization=MCP_AUTH", chrono.Sanitize(he, false))
		}
		value := strings.TrimSpace(e.Getenv(variable))
		if value == "" {
			return nil, usagef(usage, "--header-env %s: the environment variable %s is unset or empty", chrono.Sanitize(he, false), variable)
		}
		if err := add("--header-env "+chrono.Sanitize(name, false), name, value); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addSecret registers a header value, and for an Authorization value
// with a scheme its credential alone too, with the redactor. A
// credential too short to search for is said so on stderr.
func (e Env) addSecret(name, value string) {
	if e.redact == nil {
		return
	}
	secrets := []string{value}
	if c := http.CanonicalHeaderKey(name); c == "Authorization" || c == "Proxy-Authorization" {
		if scheme, cred, ok := strings.Cut(value, " "); ok && scheme != "" {
			secrets = append(secrets, strings.TrimSpace(cred))
		}
	}
	e.redact.Add(secrets...)
	if transport.CredentialHeader(name) && len(secrets[len(secrets)-1]) < chrono.MinSecretLen {
		fmt.Fprintf(e.Stderr, "mcpflight: the value of header %s is shorter than %d characters: it is redacted where headers are shown, but not searched for in recorded content\n",
			http.CanonicalHeaderKey(name), chrono.MinSecretLen)
	}
}

// redactedURL is u with its password and the values of its
// credential-looking query parameters (api_key, token, …) replaced, for
// naming a target; those values are registered as secrets too.
func (e Env) redactedURL(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	if parsed.User != nil {
		if pw, ok := parsed.User.Password(); ok {
			e.redact.Add(pw)
		}
	}
	if parsed.RawQuery != "" {
		q := parsed.Query()
		changed := false
		for name, values := range q {
			if !transport.CredentialHeader(name) {
				continue
			}
			for i, v := range values {
				e.redact.Add(v)
				values[i] = "xxxxx"
				changed = true
			}
		}
		if changed {
			parsed.RawQuery = q.Encode()
		}
	}
	return parsed.Redacted()
}

// errHeadersNeedHTTP is the usage error for --header with a stdio target.
var errHeadersNeedHTTP = errors.New("--header and --header-env apply to HTTP targets only (--url, or --transport http for check), not to a stdio server")

// redactReport replaces the secrets in every string of rep that did not
// come from a redacting chronology: the target's name, its serverInfo,
// the verdicts' texts and teardown errors.
func redactReport(rep *results.Report, r *chrono.Redactor) {
	if rep == nil || r.Empty() {
		return
	}
	redactHeader(rep, r)
	rep.Teardown.Summary = r.String(rep.Teardown.Summary)
	for i, msg := range rep.Teardown.Errors {
		rep.Teardown.Errors[i] = r.String(msg)
	}
	for i := range rep.Results {
		redactResult(&rep.Results[i], r)
	}
}

// redactHeader redacts the texts of a report's header: its target and
// server.
func redactHeader(rep *results.Report, r *chrono.Redactor) {
	if r.Empty() {
		return
	}
	rep.Target = r.String(rep.Target)
	rep.Server = redactServer(rep.Server, r)
}

func redactServer(s *results.Implementation, r *chrono.Redactor) *results.Implementation {
	if s == nil {
		return nil
	}
	c := *s
	c.Name, c.Title, c.Version = r.String(c.Name), r.String(c.Title), r.String(c.Version)
	return &c
}

// redactResult redacts the texts of one result: it may be a copy that
// shares its slices with the report's, so those are replaced, never
// written in place.
func redactResult(res *results.Result, r *chrono.Redactor) {
	if r.Empty() {
		return
	}
	res.Server = redactServer(res.Server, r)
	o := &res.Outcome
	o.Summary, o.Actual = r.String(o.Summary), r.String(o.Actual)
	expected := make([]string, len(o.Expected))
	for j, alt := range o.Expected {
		expected[j] = r.String(alt)
	}
	if o.Expected != nil {
		o.Expected = expected
	}
	res.Teardown.Err = r.String(res.Teardown.Err)
}

// flushWriters flushes redacting writers, if ws are any.
func flushWriters(ws ...io.Writer) {
	for _, w := range ws {
		if rw, ok := w.(*chrono.RedactWriter); ok {
			_ = rw.Flush()
		}
	}
}
