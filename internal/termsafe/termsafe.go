// Package termsafe is the tests' independent oracle of terminal-safe
// output: what chrono.Sanitize, the reports and the CLI must never let
// through. It is written apart from chrono's own rules on purpose, so that
// a test does not check the sanitiser against itself.
package termsafe

import "unicode/utf8"

// FirstUnsafe reports the first character in out that a terminal would
// act on or a reader be fooled by — C0 controls but newline and tab, DEL,
// C1 controls, bidi controls (U+061C, U+200E/F, U+202A–E, U+2066–9) and
// invalid UTF-8 — as what it is and its byte offset; at is -1 when there
// is none.
func FirstUnsafe(out []byte) (what string, at int) {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRune(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return "invalid UTF-8", i
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f:
			return "C0 control or DEL", i
		case r >= 0x80 && r <= 0x9f:
			return "C1 control", i
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return "bidi control", i
		}
		i += size
	}
	return "", -1
}
