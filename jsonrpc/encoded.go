package jsonrpc

import (
	"bytes"
	"unicode/utf8"
)

// paramsMember is how EncodeRequest and EncodeNotification write the
// params member. No JSON string can hold it unescaped (every quote inside
// a string is escaped), so its first occurrence in such a frame is the
// member itself.
var paramsMember = []byte(`,"params":`)

// Encoded is the message Decode reads from raw, a frame EncodeRequest (id
// valid) or EncodeNotification (id absent) made of id, method and params,
// built without decoding raw again: for a sender that records what it
// sends. It is nil when it cannot be told without decoding (a string that
// encoding replaced, or a frame that is not valid UTF-8); decode raw then.
func Encoded(raw []byte, id ID, method string) *Message {
	if method == "" || !utf8.ValidString(method) || (id.IsString() && !utf8.ValidString(id.str)) || !utf8.Valid(raw) ||
		len(raw) == 0 || raw[len(raw)-1] != '}' {
		return nil
	}
	m := &Message{Kind: KindNotification, Method: method, Raw: raw}
	if id.IsValid() {
		m.Kind, m.ID = KindRequest, id
	}
	if i := bytes.Index(raw, paramsMember); i >= 0 {
		m.Params = raw[i+len(paramsMember) : len(raw)-1 : len(raw)-1]
	}
	return m
}
