package chrono

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanitize makes untrusted text (server messages, reasons, tool output)
// safe for a terminal: invalid UTF-8 becomes U+FFFD, and control
// characters, escape sequences and bidirectional overrides become visible
// \u escapes. Newlines and tabs survive only when keepNewlines is set.
// HTML output must still be escaped by its renderer.
func Sanitize(s string, keepNewlines bool) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r, keepNewlines) {
			clean = false
			break
		}
	}
	if clean && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case unsafeRune(r, keepNewlines):
			b.WriteString(`\u`)
			const hex = "0123456789abcdef"
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hex[(r>>uint(shift))&0xf])
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafeRune(r rune, keepNewlines bool) bool {
	if keepNewlines && (r == '\n' || r == '\t') {
		return false
	}
	if r > 0xffff {
		return false
	}
	switch {
	case unicode.IsControl(r):
		return true
	case bidiControl(r):
		return true
	}
	return false
}

// bidiControl reports whether r is a bidirectional formatting character,
// which can make text display in an order other than its own.
func bidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// SafeJSON rewrites the C1 control characters (U+0080 to U+009F) and the
// bidirectional controls in encoded JSON as \u escapes. encoding/json
// escapes C0 controls but writes these as they are, and some terminals
// act on a C1 control (U+009B is CSI) even in UTF-8. Outside strings JSON
// is ASCII, so the document's value does not change.
func SafeJSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x80 && r <= 0x9f || bidiControl(r) {
			if out == nil {
				out = make([]byte, 0, len(b)+32)
			}
			out = append(out, b[last:i]...)
			out = fmt.Appendf(out, `\u%04x`, r)
			last = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
