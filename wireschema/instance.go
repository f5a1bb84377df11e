package wireschema

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// DecodeInstance decodes raw JSON for Validate (numbers are kept exact):
// what jsonschema.UnmarshalJSON gives, and fails where it fails
// (TestDecodeInstance, FuzzDecodeInstance). A valid document, which a
// frame the recorder decoded always is, is read by decodeValid, without
// the reader, the buffer and the reflection of a json.Decoder, which were
// a third of the schema check of a small message; anything else is left
// to jsonschema.UnmarshalJSON, whose errors stay its own.
func DecodeInstance(raw []byte) (any, error) {
	if json.Valid(raw) && utf8.Valid(raw) {
		if v, ok := decodeValid(raw); ok {
			return v, nil
		}
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// decodeValid decodes a valid JSON document of valid UTF-8 as a
// json.Decoder with UseNumber does into an any: objects as map[string]any
// (a repeated name keeps its last value), arrays as []any, numbers as
// json.Number, strings unescaped. ok is false if it meets what it leaves
// to encoding/json (an escaped string it cannot unquote).
func decodeValid(raw []byte) (v any, ok bool) {
	d := instanceDecoder{b: raw}
	d.space()
	v = d.value()
	return v, !d.failed
}

type instanceDecoder struct {
	b      []byte
	i      int
	failed bool
}

func (d *instanceDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value decodes the value at d.i, which the caller knows is there (the
// document is valid), and the space after it.
func (d *instanceDecoder) value() any {
	var v any
	switch c := d.b[d.i]; c {
	case '{':
		m := map[string]any{}
		d.i++
		d.space()
		for d.b[d.i] != '}' {
			k := d.string()
			d.space()
			d.i++ // ':'
			d.space()
			m[k] = d.value()
			if d.b[d.i] == ',' {
				d.i++
				d.space()
			}
		}
		d.i++
		v = m
	case '[':
		a := []any{}
		d.i++
		d.space()
		for d.b[d.i] != ']' {
			a = append(a, d.value())
			if d.b[d.i] == ',' {
				d.i++
				d.space()
			}
		}
		d.i++
		v = a
	case '"':
		v = d.string()
	case 't':
		v, d.i = true, d.i+4
	case 'f':
		v, d.i = false, d.i+5
	case 'n':
		v, d.i = nil, d.i+4
	default:
		start := d.i
		for d.i < len(d.b) && strings.IndexByte("0123456789+-.eE", d.b[d.i]) >= 0 {
			d.i++
		}
		v = json.Number(d.b[start:d.i])
	}
	d.space()
	return v
}

// string decodes the string at d.i: as it is written when it has no
// escape, by encoding/json when it has.
func (d *instanceDecoder) string() string {
	start := d.i
	escaped := false
	for d.i++; d.b[d.i] != '"'; d.i++ {
		if d.b[d.i] == '\\' {
			escaped = true
			d.i++
		}
	}
	d.i++
	lit := d.b[start:d.i]
	if !escaped {
		return intern(lit[1 : len(lit)-1])
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		d.failed = true
	}
	return s
}

// intern is string(b), without an allocation for the names and values
// every message repeats.
func intern(b []byte) string {
	switch string(b) {
	case "jsonrpc":
		return "jsonrpc"
	case "2.0":
		return "2.0"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "result":
		return "result"
	case "error":
		return "error"
	case "code":
		return "code"
	case "message":
		return "message"
	case "data":
		return "data"
	case "_meta":
		return "_meta"
	case "content":
		return "content"
	case "type":
		return "type"
	case "text":
		return "text"
	case "progressToken":
		return "progressToken"
	case "progress":
		return "progress"
	case "total":
		return "total"
	case "isError":
		return "isError"
	case "name":
		return "name"
	}
	return string(b)
}
