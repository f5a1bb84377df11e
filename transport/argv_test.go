package transport

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitArgs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", []string{}},
		{"blanks only", " \t\n ", []string{}},
		{"simple", "npx -y server", []string{"npx", "-y", "server"}},
		{"runs of blanks", "  a \t b\n\nc  ", []string{"a", "b", "c"}},
		{"single quotes literal", `'a b' 'x\y' '$HOME' '"'`, []string{"a b", `x\y`, "$HOME", `"`}},
		{"double quotes", `"a b" "it's"`, []string{"a b", "it's"}},
		{"double quote escapes", `"\" \\ \$ \` + "`" + `"`, []string{"\" \\ $ `"}},
		{"double quote other backslash kept", `"a\b\n"`, []string{`a\b\n`}},
		{"double quote line continuation", "\"a\\\nb\"", []string{"ab"}},
		{"backslash outside quotes", `a\ b \'c \"d \\e \x`, []string{"a b", "'c", `"d`, `\e`, "x"}},
		{"line continuation", "a\\\nb c", []string{"ab", "c"}},
		{"continuation between args", "a \\\n b", []string{"a", "b"}},
		{"empty single quoted", `a '' b`, []string{"a", "", "b"}},
		{"empty double quoted", `"" x ""`, []string{"", "x", ""}},
		{"empty quotes glued to word", `a'' ''b`, []string{"a", "b"}},
		{"adjacent quoting concatenates", `a'b c'"d e"f`, []string{"ab cd ef"}},
		{"no expansion", `$HOME ~ *.go a|b a;b`, []string{"$HOME", "~", "*.go", "a|b", "a;b"}},
		{"json argument", `--config '{"a": [1, 2]}'`, []string{"--config", `{"a": [1, 2]}`}},
		{"utf-8", `héllo 'wörld ✓' \é`, []string{"héllo", "wörld ✓", "é"}},
		{"crlf", "a\r\nb", []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitArgs(tt.in)
			if err != nil {
				t.Fatalf("SplitArgs(%q): %v", tt.in, err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("SplitArgs(%q) (-want +got):\n%s", tt.in, d)
			}
		})
	}
}

func TestSplitArgsErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"unterminated single", `a 'b c`, "unterminated single quote at offset 2"},
		{"unterminated double", `"a b`, "unterminated double quote at offset 0"},
		{"escaped closing double", `"a\"`, "unterminated double quote"},
		{"backslash does not escape in single", `'a\'b'`, "unterminated single quote at offset 5"},
		{"trailing backslash", `a b\`, "trailing backslash at offset 3"},
		{"backslash at end inside double", `"a\`, "unterminated double quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitArgs(tt.in)
			if err == nil {
				t.Fatalf("SplitArgs(%q) = %q, want an error", tt.in, got)
			}
			if !errors.Is(err, ErrBadCommandLine) {
				t.Errorf("error %v does not wrap ErrBadCommandLine", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestQuoteArgs(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"npx", "-y", "@scope/server@1.2"}, "npx -y @scope/server@1.2"},
		{[]string{""}, "''"},
		{[]string{"a b", "it's", "$x"}, `'a b' 'it'\''s' '$x'`},
	}
	for _, tt := range tests {
		if got := QuoteArgs(tt.in); got != tt.want {
			t.Errorf("QuoteArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzQuoteArgs checks that SplitArgs inverts QuoteArgs for any argv
// (NUL separates the arguments in the fuzz input).
func FuzzQuoteArgs(f *testing.F) {
	f.Add("a\x00b c\x00\x00it's\x00\"\\$`\n")
	f.Fuzz(func(t *testing.T, in string) {
		argv := strings.Split(in, "\x00")
		got, err := SplitArgs(QuoteArgs(argv))
		if err != nil {
			t.Fatalf("SplitArgs(QuoteArgs(%q)): %v", argv, err)
		}
		if d := cmp.Diff(argv, got); d != "" {
			t.Fatalf("round trip (-want +got):\n%s", d)
		}
	})
}

// FuzzSplitArgs checks that whatever SplitArgs accepts survives a second
// round through QuoteArgs and SplitArgs.
func FuzzSplitArgs(f *testing.F) {
	for _, s := range []string{`a 'b c' "d\"e" f\ g`, `''`, "a\\\nb", `"\x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		argv, err := SplitArgs(in)
		if err != nil {
			return
		}
		again, err := SplitArgs(QuoteArgs(argv))
		if err != nil {
			t.Fatalf("re-splitting %q: %v", QuoteArgs(argv), err)
		}
		if d := cmp.Diff(argv, again); d != "" {
			t.Fatalf("round trip of %q (-want +got):\n%s", in, d)
		}
	})
}
