package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Version is the only JSON-RPC version MCP speaks.
const Version = "2.0"

// Standard JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Kind says what a message is.
type Kind uint8

// The four message kinds of JSON-RPC 2.0.
const (
	KindRequest Kind = iota + 1
	KindNotification
	KindResult
	KindError
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResult:
		return "result"
	case KindError:
		return "error"
	}
	return "unknown"
}

// ParseKind is the Kind whose String is s, as a chronology's summary
// names it; ok is false for any other text.
func ParseKind(s string) (Kind, bool) {
	for k := KindRequest; k <= KindError; k++ {
		if k.String() == s {
			return k, true
		}
	}
	return 0, false
}

// IsResponse reports whether the kind answers a request.
func (k Kind) IsResponse() bool { return k == KindResult || k == KindError }

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Message is one decoded JSON-RPC message. Raw holds the exact bytes read.
// For error responses whose id was null (allowed by JSON-RPC for parse
// errors), ID is absent and NullID is true.
type Message struct {
	Kind   Kind
	ID     ID
	NullID bool
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *Error
	Raw    []byte
}

// DecodeClass classifies why bytes are not a valid message.
type DecodeClass string

// The ways a frame can fail to be a JSON-RPC message.
const (
	ClassParse        DecodeClass = "parse-error"
	ClassNotObject    DecodeClass = "not-object"
	ClassBatch        DecodeClass = "batch"
	ClassWrongVersion DecodeClass = "wrong-version"
	ClassInvalidID    DecodeClass = "invalid-id"
	ClassAmbiguous    DecodeClass = "ambiguous-shape"
	ClassInvalidUTF8  DecodeClass = "invalid-utf8"
)

// ErrMalformed is wrapped by every DecodeError.
var ErrMalformed = errors.New("malformed JSON-RPC message")

// DecodeError says why a frame was rejected, and keeps the frame.
type DecodeError struct {
	Class  DecodeClass
	Detail string
	Raw    []byte
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: %s", e.Class, e.Detail)
}

// Unwrap makes errors.Is(err, ErrMalformed) true.
func (e *DecodeError) Unwrap() error { return ErrMalformed }

func decodeErr(class DecodeClass, raw []byte, format string, args ...any) *DecodeError {
	return &DecodeError{Class: class, Detail: fmt.Sprintf(format, args...), Raw: raw}
}

// wireShape is the loose first pass: every member kept raw so that presence
// and null can be told apart.
type wireShape struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Decode parses one frame strictly. It never normalises: the returned
// message keeps raw, and any deviation from JSON-RPC 2.0 as MCP uses it is a
// *DecodeError with its class.
func Decode(raw []byte) (*Message, error) {
	if !utf8.Valid(raw) {
		return nil, decodeErr(ClassInvalidUTF8, raw, "frame is not valid UTF-8 (RPC-3)")
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return nil, decodeErr(ClassParse, raw, "empty frame")
	}
	if trimmed[0] != '{' {
		switch {
		case !json.Valid(trimmed):
			return nil, decodeErr(ClassParse, raw, "not valid JSON")
		case trimmed[0] == '[':
			return nil, decodeErr(ClassBatch, raw, "JSON-RPC batch arrays are not used by MCP")
		default:
			return nil, decodeErr(ClassNotObject, raw, "top-level JSON value is not an object")
		}
	}
	w, ok := readShape(trimmed)
	if !ok {
		return nil, decodeErr(ClassParse, raw, "not valid JSON")
	}
	if string(w.JSONRPC) != `"2.0"` {
		if w.JSONRPC == nil {
			return nil, decodeErr(ClassWrongVersion, raw, `missing "jsonrpc" member`)
		}
		return nil, decodeErr(ClassWrongVersion, raw, `"jsonrpc" is %s, want "2.0"`, clip(w.JSONRPC))
	}
	m := &Message{Raw: raw}
	hasMethod, hasResult, hasError := w.Method != nil, w.Result != nil, w.Error != nil
	switch {
	case hasMethod && (hasResult || hasError):
		return nil, decodeErr(ClassAmbiguous, raw, "has both method and result/error")
	case hasResult && hasError:
		return nil, decodeErr(ClassAmbiguous, raw, "has both result and error")
	case hasMethod:
		if !plainString(w.Method, &m.Method) {
			if err := json.Unmarshal(w.Method, &m.Method); err != nil {
				return nil, decodeErr(ClassAmbiguous, raw, "method is not a string")
			}
		}
		m.Params = bytes.Clone(w.Params)
		if w.ID == nil {
			m.Kind = KindNotification
			return m, nil
		}
		id, err := ParseID(w.ID)
		if err != nil {
			return nil, decodeErr(ClassInvalidID, raw, "request id: %v", err)
		}
		m.Kind, m.ID = KindRequest, id
		return m, nil
	case hasResult || hasError:
		if w.Params != nil {
			return nil, decodeErr(ClassAmbiguous, raw, "response carries params")
		}
		switch {
		case w.ID == nil:
			return nil, decodeErr(ClassInvalidID, raw, "response without id")
		case string(bytes.TrimSpace(w.ID)) == "null":
			if !hasError {
				return nil, decodeErr(ClassInvalidID, raw, "result with null id")
			}
			m.NullID = true
		default:
			id, err := ParseID(w.ID)
			if err != nil {
				return nil, decodeErr(ClassInvalidID, raw, "response id: %v", err)
			}
			m.ID = id
		}
		if hasResult {
			m.Kind, m.Result = KindResult, bytes.Clone(w.Result)
			return m, nil
		}
		var e Error
		if err := json.Unmarshal(w.Error, &e); err != nil || bytes.TrimSpace(w.Error)[0] != '{' {
			return nil, decodeErr(ClassAmbiguous, raw, "error member is not an error object")
		}
		m.Kind, m.Error = KindError, &e
		return m, nil
	}
	return nil, decodeErr(ClassAmbiguous, raw, "neither method nor result nor error")
}

// envelope is the encoding shape; omitempty keeps absent members absent.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *ID             `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// marshalParams encodes v, and says whether json.Marshal did (false for
// nil and for a caller's json.RawMessage, kept as it is).
func marshalParams(v any) (json.RawMessage, bool, error) {
	if v == nil {
		return nil, false, nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, false, nil
	}
	raw, err := json.Marshal(v)
	return raw, true, err
}

// EncodeRequest encodes a request. params may be nil, a json.RawMessage or
// any value encoding/json accepts.
func EncodeRequest(id ID, method string, params any) ([]byte, error) {
	if !id.IsValid() {
		return nil, errors.New("jsonrpc: request needs a string or integer id")
	}
	p, encoded, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return appendEnvelope(&id, method, "params", p, encoded)
}

// EncodeNotification encodes a notification.
func EncodeNotification(method string, params any) ([]byte, error) {
	p, encoded, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return appendEnvelope(nil, method, "params", p, encoded)
}

// EncodeResult encodes a success response.
func EncodeResult(id ID, result any) ([]byte, error) {
	r, encoded, err := marshalParams(result)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r, encoded = json.RawMessage(`{}`), true
	}
	return appendEnvelope(&id, "", "result", r, encoded)
}

// appendEnvelope writes what json.Marshal writes of an envelope with id
// (nil: none), method ("": none) and member (params or result, empty:
// none; encoded: json.Marshal wrote it, so it is compact and escaped
// already), byte for byte (TestEnvelopeAsMarshalled), without reflection,
// and without compacting again the value that json.Marshal encoded.
func appendEnvelope(id *ID, method, member string, value json.RawMessage, encoded bool) ([]byte, error) {
	var idRaw, methodRaw []byte
	var err error
	if id != nil {
		// Already compact, and a string already escaped as the
		// encoder escapes it.
		if idRaw, err = id.MarshalJSON(); err != nil {
			return nil, err
		}
	}
	if method != "" {
		if methodRaw, err = json.Marshal(method); err != nil {
			return nil, err
		}
	}
	if len(value) > 0 && !encoded {
		// A caller's raw JSON, validated, compacted and escaped as
		// the encoder does with it.
		if value, err = json.Marshal(value); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"method":,"params":}`)+len(idRaw)+len(methodRaw)+len(value))
	b = append(b, `{"jsonrpc":"2.0"`...)
	if id != nil {
		b = append(append(b, `,"id":`...), idRaw...)
	}
	if method != "" {
		b = append(append(b, `,"method":`...), methodRaw...)
	}
	if len(value) > 0 {
		b = append(append(append(append(b, `,"`...), member...), `":`...), value...)
	}
	return append(b, '}'), nil
}

// EncodeError encodes an error response. An absent id is written as null,
// as JSON-RPC requires when the request id could not be read.
func EncodeError(id ID, e *Error) ([]byte, error) {
	if !id.IsValid() {
		type nullEnvelope struct {
			JSONRPC string `json:"jsonrpc"`
			ID      any    `json:"id"`
			Error   *Error `json:"error"`
		}
		return json.Marshal(nullEnvelope{JSONRPC: Version, ID: nil, Error: e})
	}
	return json.Marshal(envelope{JSONRPC: Version, ID: &id, Error: e})
}
