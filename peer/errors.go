package peer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
	"github.com/mcpflight/mcpflight/mcp"
)

// The errors MCP 2026-07-28 defines (26/index §Error Codes): -32020
// HeaderMismatch, -32021 MissingRequiredClientCapability and -32022
// UnsupportedProtocolVersion. Error2026 turns a JSON-RPC error with one
// of these codes into its typed error, which callers test with errors.As;
// each unwraps to the *jsonrpc.Error it came from. Their data is read
// defensively: a server that leaves it out or gives it another shape
// yields empty fields, and Malformed says what was wrong.

// UnsupportedVersionError is -32022 UnsupportedProtocolVersion: the
// server does not support the requested protocol version (LIF-40), and
// lists those it does in data.supported.
type UnsupportedVersionError struct {
	// Supported is data.supported, the server's versions, as sent.
	Supported []string
	// Requested is data.requested, the version the server says we asked
	// for.
	Requested string
	// Malformed says what was wrong with data, "" when it has the
	// schema's shape.
	Malformed string
	Err       *jsonrpc.Error
}

func (e *UnsupportedVersionError) Error() string {
	var b strings.Builder
	b.WriteString("the server does not support protocol version ")
	if e.Requested != "" {
		b.WriteString(chrono.Sanitize(e.Requested, false))
	} else {
		b.WriteString("requested")
	}
	b.WriteString(" (-32022 UnsupportedProtocolVersion")
	if e.Err != nil && e.Err.Message != "" {
		b.WriteString(": " + chrono.Sanitize(e.Err.Message, false))
	}
	b.WriteString(")")
	if len(e.Supported) > 0 {
		b.WriteString("; it supports " + sanitizedList(e.Supported))
	} else {
		b.WriteString("; it lists no supported version")
	}
	if e.Malformed != "" {
		b.WriteString(" (" + e.Malformed + ")")
	}
	return b.String()
}

// Unwrap returns the JSON-RPC error.
func (e *UnsupportedVersionError) Unwrap() error { return e.Err }

// Offers reports whether the server lists version as supported.
func (e *UnsupportedVersionError) Offers(version string) bool {
	return slices.Contains(e.Supported, version)
}

// HeaderMismatchError is -32020 HeaderMismatch: the HTTP headers do not
// match the body, or a required header is missing or malformed
// (HTTP-103, HTTP-104).
type HeaderMismatchError struct {
	Err *jsonrpc.Error
}

func (e *HeaderMismatchError) Error() string {
	return "the server rejected the request's headers (-32020 HeaderMismatch: " + chrono.Sanitize(e.Err.Message, false) + ")"
}

// Unwrap returns the JSON-RPC error.
func (e *HeaderMismatchError) Unwrap() error { return e.Err }

// MissingCapabilityError is -32021 MissingRequiredClientCapability: the
// request needs client capabilities it did not declare (RPC-55), listed
// in data.requiredCapabilities.
type MissingCapabilityError struct {
	// Required is data.requiredCapabilities, raw (a ClientCapabilities
	// object), and Names its top-level members, sorted.
	Required  json.RawMessage
	Names     []string
	Malformed string
	Err       *jsonrpc.Error
}

func (e *MissingCapabilityError) Error() string {
	s := "the request needs client capabilities it did not declare (-32021 MissingRequiredClientCapability: " + chrono.Sanitize(e.Err.Message, false) + ")"
	if len(e.Names) > 0 {
		s += "; required: " + sanitizedList(e.Names)
	}
	if e.Malformed != "" {
		s += " (" + e.Malformed + ")"
	}
	return s
}

// Unwrap returns the JSON-RPC error.
func (e *MissingCapabilityError) Unwrap() error { return e.Err }

// Error2026 returns the typed error of a JSON-RPC error with one of the
// codes 2026-07-28 defines, and e itself otherwise. A nil e is nil.
func Error2026(e *jsonrpc.Error) error {
	if e == nil {
		return nil
	}
	switch e.Code {
	case mcp.CodeUnsupportedProtocolVersion:
		out := &UnsupportedVersionError{Err: e}
		var d struct {
			Supported json.RawMessage `json:"supported"`
			Requested json.RawMessage `json:"requested"`
		}
		switch {
		case len(e.Data) == 0:
			out.Malformed = "the error has no data"
		case json.Unmarshal(e.Data, &d) != nil:
			out.Malformed = "its data is not an object"
		default:
			if json.Unmarshal(d.Supported, &out.Supported) != nil {
				out.Supported = nil
				out.Malformed = "data.supported is not an array of strings"
			}
			if json.Unmarshal(d.Requested, &out.Requested) != nil && out.Malformed == "" {
				out.Malformed = "data.requested is not a string"
			}
		}
		return out
	case mcp.CodeHeaderMismatch:
		return &HeaderMismatchError{Err: e}
	case mcp.CodeMissingRequiredClientCapability:
		out := &MissingCapabilityError{Err: e}
		var d struct {
			Required json.RawMessage `json:"requiredCapabilities"`
		}
		var caps map[string]json.RawMessage
		switch {
		case len(e.Data) == 0:
			out.Malformed = "the error has no data"
		case json.Unmarshal(e.Data, &d) != nil || d.Required == nil:
			out.Malformed = "its data has no requiredCapabilities object"
		case json.Unmarshal(d.Required, &caps) != nil:
			out.Malformed = "data.requiredCapabilities is not an object"
		default:
			out.Required = d.Required
			for name := range caps {
				out.Names = append(out.Names, name)
			}
			slices.Sort(out.Names)
		}
		return out
	}
	return e
}

// IsError2026 reports whether err carries an error 2026-07-28 defines
// (-32020, -32021, -32022): the mark of a modern server, after which a
// client does not fall back to initialize (STD-48, HTTP-106).
func IsError2026(err error) bool {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return false
	}
	switch je.Code {
	case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

// ErrorName names a JSON-RPC or MCP error code ("-32601 Method not
// found", "-32022 UnsupportedProtocolVersion"), or the bare code.
func ErrorName(code int) string {
	name := map[int]string{
		jsonrpc.CodeParseError:                  "Parse error",
		jsonrpc.CodeInvalidRequest:              "Invalid Request",
		jsonrpc.CodeMethodNotFound:              "Method not found",
		jsonrpc.CodeInvalidParams:               "Invalid params",
		jsonrpc.CodeInternalError:               "Internal error",
		mcp.CodeHeaderMismatch:                  "HeaderMismatch",
		mcp.CodeMissingRequiredClientCapability: "MissingRequiredClientCapability",
		mcp.CodeUnsupportedProtocolVersion:      "UnsupportedProtocolVersion",
	}[code]
	if name == "" {
		return fmt.Sprint(code)
	}
	return fmt.Sprintf("%d %s", code, name)
}

// sanitizedList joins untrusted strings for a message.
func sanitizedList(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = chrono.Sanitize(v, false)
	}
	return strings.Join(out, ", ")
}
