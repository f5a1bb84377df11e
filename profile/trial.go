package profile

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// SlowTrial is what one call of a slow tool's candidate showed: how long
// it ran and how many progress notifications it sent; Failed names an
// error answer or a call that could not be made.
type SlowTrial struct {
	Took     time.Duration
	Progress int
	Failed   string
}

// SlowCaller calls a tool with a progress token and reports what the
// call showed. TrySlow calls it only for tools whose annotations say they
// only read.
type SlowCaller func(ctx context.Context, t Tool) SlowTrial

// MinSlow is how long a call that sends no progress must run to count as
// a long-running tool: a second or more, what the catalogue's cases need
// to act while the work is in flight.
const MinSlow = time.Second

// maxSlowTrials bounds the candidates TrySlow calls.
const maxSlowTrials = 3

// TrySlow checks the draft's guess for the slow tool before it is kept:
// it calls each candidate (the tools whose name, then description,
// suggests long-running work), but only one whose annotations say it only
// reads, since drafting must never call a tool that may write without the
// user asking for it. A candidate is kept when it ran for MinSlow or sent
// progress, and dropped, with why, when it answered sooner without any. A
// candidate it may not call is kept as a guess the user must confirm.
// When no candidate is left, the draft states the server lacks a slow
// tool (Profile.Lacks), so that the cases that need one are not
// applicable rather than skipped for want of a profile. A draft for a
// target with the control extension, whose operations the checker paces
// itself, is left as it is.
func (d *Draft) TrySlow(ctx context.Context, controlled bool, call SlowCaller) {
	if controlled {
		return
	}
	candidates := d.slowCandidates()
	tried := 0
	for _, t := range candidates {
		if !t.ReadOnly {
			d.Trials = append(d.Trials, fmt.Sprintf("%s: not called: its annotations do not say it only reads (readOnlyHint), so it may write; confirm by hand that it runs for a second or more and sends progress", oneLine(t.Name)))
			d.keepSlow(t)
			return
		}
		if tried == maxSlowTrials {
			break
		}
		tried++
		args := d.argsFor(t)
		tr := call(ctx, Tool{Name: t.Name, Arguments: args})
		switch {
		case tr.Failed != "":
			d.Trials = append(d.Trials, fmt.Sprintf("%s: called, and it failed (%s) after %v: not kept", oneLine(t.Name), oneLine(tr.Failed), tr.Took.Round(time.Millisecond)))
		case tr.Progress > 0 || tr.Took >= MinSlow:
			d.Trials = append(d.Trials, fmt.Sprintf("%s: called: it ran %v and sent %d progress notifications: kept", oneLine(t.Name), tr.Took.Round(time.Millisecond), tr.Progress))
			d.keepSlow(t)
			return
		default:
			d.Trials = append(d.Trials, fmt.Sprintf("%s: called: it answered in %v with no progress, so it is no long-running tool: not kept", oneLine(t.Name), tr.Took.Round(time.Millisecond)))
		}
	}
	d.dropGuess(NeedSlow)
	why := "no tool of tools/list looks long-running by its name or description"
	if tried > 0 {
		why = fmt.Sprintf("no candidate called (%d) ran for %v or sent progress", tried, MinSlow)
	}
	d.lack(NeedSlow, why)
}

// StateLacks adds what tools/list and the server's capabilities say
// outright: no task tool when no tool's execution.taskSupport allows a
// task, no log tool when the server does not declare logging (a server
// sends log messages only under that capability). Nothing is said of an
// effect tool: a tool's side effects are not in tools/list.
func (d *Draft) StateLacks(declaresLogging bool) {
	if d.Profile.Task == nil {
		d.lack(NeedTask, "no tool of tools/list gives execution.taskSupport \"optional\" or \"required\"")
	}
	if d.Profile.Log == nil && !declaresLogging {
		d.lack(NeedLog, "the server does not declare the logging capability")
	}
}

// lack states that the server has no tool for need, and why.
func (d *Draft) lack(need, why string) {
	if d.LacksWhy == nil {
		d.LacksWhy = map[string]string{}
	}
	if _, ok := d.LacksWhy[need]; ok {
		return
	}
	d.LacksWhy[need] = why
	d.Profile.Lacks = nil
	for _, n := range Needs() {
		if _, ok := d.LacksWhy[n]; ok {
			d.Profile.Lacks = append(d.Profile.Lacks, n)
		}
	}
}

// slowCandidates are the tools whose name, then description, has a word
// of the slow need, that can be called without a task, each once.
func (d *Draft) slowCandidates() []ListedTool {
	var out []ListedTool
	seen := map[string]bool{}
	for _, field := range []string{"name", "description"} {
		for _, t := range d.listed {
			text := t.Name
			if field == "description" {
				text = t.Description
			}
			if seen[t.Name] || t.TaskSupport == "required" || !needWords[NeedSlow].MatchString(text) {
				continue
			}
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}

// keepSlow makes t the draft's slow tool.
func (d *Draft) keepSlow(t ListedTool) {
	for _, g := range d.Guesses {
		if g.Need == NeedSlow && g.Tool.Name == t.Name {
			return // the guess already
		}
	}
	d.dropGuess(NeedSlow)
	args := d.argsFor(t)
	tool := Tool{Name: t.Name, Arguments: args}
	why := "a guess: its name or description suggests long-running work"
	if paced, steps := slowPace(t.InputSchema, tool.Arguments); paced {
		why += "; a short run set from its inputSchema's step and duration properties"
		d.Profile.SlowSteps = steps
	}
	d.Guesses = append(d.Guesses, Guess{Need: NeedSlow, Tool: tool, Why: why})
	d.Profile.Slow = &tool
}

// dropGuess removes the draft's guess for need.
func (d *Draft) dropGuess(need string) {
	kept := d.Guesses[:0]
	for _, g := range d.Guesses {
		if g.Need != need {
			kept = append(kept, g)
		}
	}
	d.Guesses = kept
	if need == NeedSlow {
		d.Profile.Slow, d.Profile.SlowSteps = nil, 0
	}
}

// argsFor is the arguments the draft gives t: those of its guess when it
// is one, else the minimal ones its schema accepts, paced as a slow
// tool's.
func (d *Draft) argsFor(t ListedTool) map[string]any {
	for _, g := range d.Guesses {
		if g.Tool.Name == t.Name {
			return g.Tool.CloneArgs()
		}
	}
	args := MinimalArguments(t.InputSchema)
	slowPace(t.InputSchema, args)
	return args
}

// lacksLines are the YAML lines that state the needs the server lacks,
// with what each rests on.
func (d Draft) lacksLines() string {
	if len(d.Profile.Lacks) == 0 {
		return ""
	}
	var b strings.Builder
	for _, need := range d.Profile.Lacks {
		fmt.Fprintf(&b, "# LACKS (%s): %s\n", need, oneLine(d.LacksWhy[need]))
	}
	fmt.Fprintf(&b, "# the cases that need such a tool are then not applicable; delete a need here if the server has one\n")
	fmt.Fprintf(&b, "lacks: [%s]\n", strings.Join(d.Profile.Lacks, ", "))
	return b.String()
}
