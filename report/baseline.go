package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/mcpflight/mcpflight/results"
)

// Baseline writes the comparison of a run with its baseline, after the
// text report: the known failures (shown, not counted), the unexpected
// ones, the stale entries and those this run could not check, and the
// exit code the baseline gives.
func Baseline(w io.Writer, r *results.Report, c results.BaselineComparison, file string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "baseline %s\n", san(file))
	section := func(title, note string, fs []results.BaselineFinding) {
		if len(fs) == 0 {
			return
		}
		fmt.Fprintf(bw, "  %s (%d) — %s\n", title, len(fs), note)
		for _, f := range fs {
			line := "    " + san(f.ID)
			switch {
			case f.Listed != "" && f.Now != "":
				line += fmt.Sprintf("  listed %s, now %s", f.Listed, f.Now)
			case f.Listed != "":
				line += fmt.Sprintf("  listed %s, not run", f.Listed)
			default:
				line += fmt.Sprintf("  %s, not listed", f.Now)
			}
			if f.Summary != "" {
				line += ": " + san(f.Summary)
			}
			fmt.Fprintln(bw, line)
		}
	}
	section("unexpected", "not in the baseline, or worse than listed; a fail exits 1", c.Unexpected)
	section("stale", "listed but no longer so; update the baseline (--write-baseline); exits 1", c.Stale)
	section("known", "shown above, do not change the exit code", c.Known)
	section("unchecked", "listed, but this run has no verdict on them", c.Unchecked)
	code := c.ExitCode(r)
	verdict := map[int]string{0: "pass: no unexpected failure, no stale entry", 1: "fail", 2: "inconclusive: the harness or the target broke, or the run was interrupted"}[code]
	fmt.Fprintf(bw, "mcpflight with baseline: %d known, %d unexpected, %d stale, %d unchecked — exit %d, %s\n",
		len(c.Known), len(c.Unexpected), len(c.Stale), len(c.Unchecked), code, verdict)
	return bw.Flush()
}
