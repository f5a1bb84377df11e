package termsafe

import "testing"

func TestFirstUnsafe(t *testing.T) {
	for _, tt := range []struct {
		in   string
		what string
		at   int
	}{
		{"plain text\nwith\ttabs and é", "", -1},
		{"ab\x1b[2J", "C0 control or DEL", 2},
		{"a\x7f", "C0 control or DEL", 1},
		{"x\u009b31m", "C1 control", 1},
		{"x\u202eevil", "bidi control", 1},
		{"x\u061c", "bidi control", 1},
		{"ok\xff", "invalid UTF-8", 2},
		{"cr\r", "C0 control or DEL", 2},
	} {
		if what, at := FirstUnsafe([]byte(tt.in)); what != tt.what || at != tt.at {
			t.Errorf("FirstUnsafe(%q) = %q at %d, want %q at %d", tt.in, what, at, tt.what, tt.at)
		}
	}
}
