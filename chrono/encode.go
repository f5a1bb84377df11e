package chrono

import (
	"strconv"
	"unicode/utf8"
)

// appendEvent appends e as one JSON object, byte for byte what
// encoding/json writes of it (MarshalJSON's documented form: the fields in
// declaration order, empty ones left out as their omitempty tags say, Raw
// as the string "raw" last, strings escaped as the encoder escapes them,
// HTML characters included), without reflection: a recorder encodes every
// frame of a conversation, and reflection was most of that cost. safe
// also escapes what SafeJSON escapes (C1 and bidirectional controls), so
// that the line needs no second pass. TestAppendEventAsMarshalled and
// FuzzAppendEvent hold it to encoding/json.
func appendEvent(b []byte, e Event, safe bool) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"offsetNs":`...)
	b = strconv.AppendInt(b, int64(e.Offset), 10)
	b = append(b, `,"dir":`...)
	b = appendString(b, string(e.Dir), safe)
	if e.Channel != "" {
		b = append(b, `,"channel":`...)
		b = appendString(b, e.Channel, safe)
	}
	b = append(b, `,"kind":`...)
	b = appendString(b, string(e.Kind), safe)
	if e.Size != 0 {
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, int64(e.Size), 10)
	}
	if e.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	if s := e.Summary; s != nil {
		b = append(b, `,"summary":{`...)
		n := len(b)
		for _, m := range [...]struct{ key, value string }{{"kind", s.Kind}, {"method", s.Method}, {"id", s.ID},
			{"progressToken", s.Token}, {"requestId", s.RequestID}, {"malformed", s.Malformed}} {
			if m.value == "" {
				continue
			}
			if len(b) > n {
				b = append(b, ',')
			}
			b = append(append(append(b, '"'), m.key...), `":`...)
			b = appendString(b, m.value, safe)
		}
		b = append(b, '}')
	}
	for _, m := range [...]struct{ key, value string }{{"text", e.Text}, {"from", e.From}, {"to", e.To}} {
		if m.value != "" {
			b = append(append(append(b, `,"`...), m.key...), `":`...)
			b = appendString(b, m.value, safe)
		}
	}
	if len(e.Raw) > 0 {
		b = append(b, `,"raw":`...)
		b = appendString(b, e.Raw, safe)
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string as encoding/json writes it with
// HTML escaping (its default): '"' and '\\' escaped, \b \f \n \r \t by
// name, the other C0 controls and '<', '>', '&' as \u00XX, invalid UTF-8
// as \ufffd, U+2028 and U+2029 as \u escapes; with safe, also the runes
// SafeJSON escapes.
func appendString[S string | []byte](b []byte, s S, safe bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		// At most one rune's bytes: a conversion that does not escape
		// and is this short takes no allocation.
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029' || safe && (r >= 0x80 && r <= 0x9f || bidiControl(r)):
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
