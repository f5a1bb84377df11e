package cli

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/report"
)

const showUsage = `Usage: mcpflight show [--mark SEQ] FILE.jsonl

Renders a saved chronology (a file written by "check --jsonl-dir DIR") as
a text sequence diagram: one line per event with its sequence number and
offset, arrows between the checker and the server, harness events on a
lane of their own, and frames that crossed in flight flagged. "-" reads
standard input.

Flags:
  --mark SEQ   flag the event with this sequence number (the "seq" of a
               failure's Actual line) as the first wrong event
`

func (e Env) show(args []string) (int, error) {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	mark := fs.Uint64("mark", 0, "")
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	// The file may come before or after the flags.
	var file string
	if len(args) > 0 && args[0] != "-" && len(args[0]) > 0 && args[0][0] != '-' {
		file, args = args[0], args[1:]
	}
	if done, err := e.parseShow(fs, args); done || err != nil {
		return 0, err
	}
	rest := fs.Args()
	if file == "" && len(rest) > 0 {
		file, rest = rest[0], rest[1:]
	}
	switch {
	case file == "":
		return 0, usagef(showUsage, "show needs a chronology file")
	case len(rest) > 0:
		return 0, usagef(showUsage, "unexpected argument %q", rest[0])
	}
	in := e.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		in = f
	}
	events, err := chrono.ReadJSONL(in)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", file, err)
	}
	if len(events) == 0 {
		fmt.Fprintf(e.Stdout, "%s: empty chronology (the case ended before it had a connection)\n", file)
		return 0, nil
	}
	if err := report.Sequence(e.Stdout, events, report.SequenceOptions{Mark: *mark}); err != nil {
		return 0, err
	}
	return 0, nil
}

// parseShow parses show's flags, allowing its one positional argument.
func (e Env) parseShow(fs *flag.FlagSet, args []string) (done bool, err error) {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(e.Stdout, showUsage)
			return true, nil
		}
		return false, usagef(showUsage, "%v", err)
	}
	return false, nil
}
