// Package jsonrpc is mcpflight's JSON-RPC 2.0 message model.
//
// It keeps what it reads exactly: a request ID is a string or an integer and
// the two are never confused ("5" is not 5, and 0 is a valid ID). Decoding is
// strict, keeps the raw bytes, and classifies malformed input instead of
// normalising it (RPC-2, RPC-4, RPC-5).
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// scalarKind says which JSON type a scalar holds.
type scalarKind uint8

const (
	kindAbsent scalarKind = iota
	kindString
	kindInteger
)

// scalar is the string-or-integer value shared by request IDs and progress
// tokens. The two are separate named types so that they can never be mixed
// up at compile time; they differ only in namespace, not in shape.
type scalar struct {
	kind scalarKind
	str  string
	num  int64
}

// ErrInvalidScalar reports a JSON value that is not a string or an integer.
var ErrInvalidScalar = errors.New("not a string or integer")

func (s scalar) valid() bool { return s.kind != kindAbsent }

func (s scalar) text() string {
	switch s.kind {
	case kindString:
		return strconv.Quote(s.str)
	case kindInteger:
		return strconv.FormatInt(s.num, 10)
	}
	return "<absent>"
}

func (s scalar) key() string {
	switch s.kind {
	case kindString:
		return "s:" + s.str
	case kindInteger:
		return "n:" + strconv.FormatInt(s.num, 10)
	}
	return ""
}

func (s scalar) marshal() ([]byte, error) {
	switch s.kind {
	case kindString:
		return json.Marshal(s.str)
	case kindInteger:
		return []byte(strconv.FormatInt(s.num, 10)), nil
	}
	return []byte("null"), nil
}

// parseScalar accepts exactly a JSON string or a JSON integer literal (no
// fraction, no exponent). Anything else, null included, is an error.
func parseScalar(raw []byte) (scalar, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return scalar{}, fmt.Errorf("empty value: %w", ErrInvalidScalar)
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return scalar{}, fmt.Errorf("bad string: %w", ErrInvalidScalar)
		}
		return scalar{kind: kindString, str: s}, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if bytes.ContainsAny(raw, ".eE") {
			return scalar{}, fmt.Errorf("number %s is not an integer: %w", clip(raw), ErrInvalidScalar)
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return scalar{}, fmt.Errorf("integer %s out of range: %w", clip(raw), ErrInvalidScalar)
		}
		return scalar{kind: kindInteger, num: n}, nil
	}
	return scalar{}, fmt.Errorf("value %s: %w", clip(raw), ErrInvalidScalar)
}

func clip(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// ID is a JSON-RPC request ID: a string or an integer, kept exactly.
// The zero value is the absent ID, which is never valid on a request.
type ID struct{ scalar }

// StringID returns the string ID s.
func StringID(s string) ID { return ID{scalar{kind: kindString, str: s}} }

// IntID returns the integer ID n. IntID(0) is a valid ID.
func IntID(n int64) ID { return ID{scalar{kind: kindInteger, num: n}} }

// ParseID decodes a raw JSON value as an ID. null, floats, booleans and
// containers are rejected (RPC-4, RPC-5).
func ParseID(raw []byte) (ID, error) {
	s, err := parseScalar(raw)
	return ID{s}, err
}

// IsValid reports whether the ID is present (string or integer).
func (id ID) IsValid() bool { return id.valid() }

// IsString reports whether the ID is a JSON string.
func (id ID) IsString() bool { return id.kind == kindString }

// String renders the ID as JSON would: strings quoted, integers bare.
func (id ID) String() string { return id.text() }

// Key is a map key that keeps strings and integers apart.
func (id ID) Key() string { return id.key() }

// MarshalJSON writes the ID exactly; an absent ID becomes null.
func (id ID) MarshalJSON() ([]byte, error) { return id.marshal() }

// UnmarshalJSON reads a string or integer ID and rejects everything else.
func (id *ID) UnmarshalJSON(b []byte) error {
	s, err := parseScalar(b)
	if err != nil {
		return err
	}
	id.scalar = s
	return nil
}

// ProgressToken is an MCP progress token: a string or an integer (PRG-1).
// It lives in its own namespace, apart from request IDs.
type ProgressToken struct{ scalar }

// StringToken returns the string token s.
func StringToken(s string) ProgressToken { return ProgressToken{scalar{kind: kindString, str: s}} }

// IntToken returns the integer token n. IntToken(0) is a valid token.
func IntToken(n int64) ProgressToken { return ProgressToken{scalar{kind: kindInteger, num: n}} }

// ParseToken decodes a raw JSON value as a progress token.
func ParseToken(raw []byte) (ProgressToken, error) {
	s, err := parseScalar(raw)
	return ProgressToken{s}, err
}

// IsValid reports whether the token is present.
func (t ProgressToken) IsValid() bool { return t.valid() }

// IsString reports whether the token is a JSON string.
func (t ProgressToken) IsString() bool { return t.kind == kindString }

// String renders the token as JSON would.
func (t ProgressToken) String() string { return t.text() }

// Key is a map key that keeps strings and integers apart.
func (t ProgressToken) Key() string { return t.key() }

// MarshalJSON writes the token exactly.
func (t ProgressToken) MarshalJSON() ([]byte, error) { return t.marshal() }

// UnmarshalJSON reads a string or integer token and rejects everything else.
func (t *ProgressToken) UnmarshalJSON(b []byte) error {
	s, err := parseScalar(b)
	if err != nil {
		return err
	}
	t.scalar = s
	return nil
}
