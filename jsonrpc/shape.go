package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// readShape reads the members of a frame's top-level object into a
// wireShape: exactly what json.Unmarshal(doc, &w) gives (TestReadShape,
// FuzzReadShape), and ok exactly when it succeeds, without its
// reflection. The members are spans of doc, not copies: the caller copies
// what it keeps. doc is the trimmed frame, starting with '{'.
//
// json.Valid first checks the whole document with the scanner Unmarshal
// uses (depth limit included), so that what follows may assume valid
// JSON. A member name that is escaped, or matches one of wireShape's
// names only without regard to case, is left to json.Unmarshal, whose
// rules for those stay its own.
func readShape(doc []byte) (w wireShape, ok bool) {
	if !json.Valid(doc) {
		return w, false
	}
	i := 1 // past '{'
	for {
		i = skipSpace(doc, i)
		if doc[i] == '}' {
			return w, true
		}
		// A member name: a string.
		end := stringEnd(doc, i)
		name := doc[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return fallbackShape(doc)
		}
		i = skipSpace(doc, end)
		i = skipSpace(doc, i+1) // past ':'
		vEnd := valueEnd(doc, i)
		value := doc[i:vEnd:vEnd]
		switch string(name) {
		case "jsonrpc":
			w.JSONRPC = value
		case "id":
			w.ID = value
		case "method":
			w.Method = value
		case "params":
			w.Params = value
		case "result":
			w.Result = value
		case "error":
			w.Error = value
		default:
			for _, n := range [...]string{"jsonrpc", "id", "method", "params", "result", "error"} {
				if bytes.EqualFold(name, []byte(n)) {
					return fallbackShape(doc)
				}
			}
		}
		i = skipSpace(doc, vEnd)
		if doc[i] == ',' {
			i++
		}
	}
}

// fallbackShape is readShape by json.Unmarshal, whose member spans are
// copies.
func fallbackShape(doc []byte) (w wireShape, ok bool) {
	return w, json.Unmarshal(doc, &w) == nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index past the string that starts at b[i], in valid
// JSON.
func stringEnd(b []byte, i int) int {
	for i++; ; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// valueEnd is the index past the value that starts at b[i], in valid
// JSON.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	// A number or a literal: up to a separator or space.
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

// plainString sets *s to the JSON string v when it has no escapes, as
// json.Unmarshal would (v is valid JSON and valid UTF-8), and reports
// whether it did.
func plainString(v []byte, s *string) bool {
	if len(v) < 2 || v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return false
	}
	*s = string(v[1 : len(v)-1])
	return true
}
