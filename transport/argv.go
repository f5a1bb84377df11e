package transport

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadCommandLine is wrapped by every error of SplitArgs.
var ErrBadCommandLine = errors.New("invalid command line")

// SplitArgs splits a command line into argv the way a POSIX shell would
// split a simple command, but without running a shell: there is no
// variable, tilde, glob or command expansion, and no operators (| ; & < >
// are ordinary characters). Use StdioConfig.Shell for those.
//
// The rules:
//   - unquoted blanks (space, tab, newline, carriage return) separate
//     arguments;
//   - a backslash outside quotes takes the next character literally, and a
//     backslash-newline pair is removed (a line continuation);
//   - single quotes take everything up to the next single quote literally;
//   - double quotes take their content literally except that a backslash
//     escapes " \ $ and ` (and a backslash-newline pair is removed); any
//     other backslash stays as it is;
//   - an empty pair of quotes, single or double, standing alone is kept
//     as an empty argument.
//
// An unterminated quote or a trailing backslash is an error wrapping
// ErrBadCommandLine. A line with no arguments returns an empty slice.
func SplitArgs(cmdline string) ([]string, error) {
	const (
		plain = iota
		single
		double
	)
	var (
		args       []string
		cur        strings.Builder
		inArg      bool // an argument has started, possibly empty ('')
		state      = plain
		quoteStart int
	)
	// Every character with a meaning here is ASCII, so walking bytes keeps
	// multi-byte UTF-8 sequences intact.
	for i := 0; i < len(cmdline); i++ {
		c := cmdline[i]
		switch state {
		case plain:
			switch c {
			case ' ', '\t', '\n', '\r':
				if inArg {
					args = append(args, cur.String())
					cur.Reset()
					inArg = false
				}
			case '\'':
				state, quoteStart, inArg = single, i, true
			case '"':
				state, quoteStart, inArg = double, i, true
			case '\\':
				if i+1 == len(cmdline) {
					return nil, fmt.Errorf("%w: trailing backslash at offset %d", ErrBadCommandLine, i)
				}
				i++
				if cmdline[i] == '\n' {
					continue // line continuation
				}
				cur.WriteByte(cmdline[i])
				inArg = true
			default:
				cur.WriteByte(c)
				inArg = true
			}
		case single:
			if c == '\'' {
				state = plain
			} else {
				cur.WriteByte(c)
			}
		case double:
			switch c {
			case '"':
				state = plain
			case '\\':
				if i+1 < len(cmdline) {
					switch next := cmdline[i+1]; next {
					case '"', '\\', '$', '`':
						cur.WriteByte(next)
						i++
						continue
					case '\n':
						i++
						continue
					}
				}
				cur.WriteByte(c)
			default:
				cur.WriteByte(c)
			}
		}
	}
	switch state {
	case single:
		return nil, fmt.Errorf("%w: unterminated single quote at offset %d", ErrBadCommandLine, quoteStart)
	case double:
		return nil, fmt.Errorf("%w: unterminated double quote at offset %d", ErrBadCommandLine, quoteStart)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if args == nil {
		args = []string{}
	}
	return args, nil
}

// QuoteArgs is the inverse of SplitArgs: it joins argv into one command
// line, quoting each argument only as needed, such that SplitArgs (and a
// POSIX shell) gives argv back. Reports use it to show the exact command.
func QuoteArgs(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteArg(a))
	}
	return b.String()
}

func quoteArg(a string) string {
	if a == "" {
		return "''"
	}
	if strings.IndexFunc(a, needsQuote) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// needsQuote reports whether r is outside the set of characters that no
// POSIX shell treats specially.
func needsQuote(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return false
	case strings.ContainsRune("@%+=:,./-_", r):
		return false
	}
	return true
}
