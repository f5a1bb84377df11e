package profile

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// ListedTool is one tool as tools/list describes it: what drafting a
// profile, and picking a tool for a case, read of it. Its strings come
// from the target and are untrusted.
type ListedTool struct {
	Name        string
	Description string
	// TaskSupport is execution.taskSupport: "forbidden", "optional",
	// "required", or "" (absent, which means forbidden).
	TaskSupport string
	// InputSchema is the tool's inputSchema, as listed.
	InputSchema json.RawMessage
	// ReadOnly is set when the tool's annotations say it does not modify
	// its environment (readOnlyHint true, not destructive): the only
	// tools drafting may call without being told to.
	ReadOnly bool
}

// maxSchemaDepth bounds how deep MinimalArguments follows nested objects
// of an untrusted schema.
const maxSchemaDepth = 8

// MinimalArguments is the smallest argument object an inputSchema
// accepts, as far as a schema can say: each required property with a
// value of its type (its const, default, first enum value or first
// example when it has one; else "mcpflight" for a string, its minimum or
// 1 for a number, false for a boolean, [] for an array, and a minimal
// object for an object), and no optional property. A schema it cannot
// read gives an empty object.
func MinimalArguments(schema json.RawMessage) map[string]any {
	v, _ := minimalValue(schema, 0).(map[string]any)
	if v == nil {
		return map[string]any{}
	}
	return v
}

type jsonSchema struct {
	Type       json.RawMessage            `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	Const      json.RawMessage            `json:"const"`
	Default    json.RawMessage            `json:"default"`
	Enum       []json.RawMessage          `json:"enum"`
	Examples   []json.RawMessage          `json:"examples"`
	Minimum    *float64                   `json:"minimum"`
	MinLength  int                        `json:"minLength"`
	AnyOf      []json.RawMessage          `json:"anyOf"`
	OneOf      []json.RawMessage          `json:"oneOf"`
}

// schemaType is the first type a schema names ("object" when none and it
// has properties).
func (s jsonSchema) schemaType() string {
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(s.Type, &many) == nil {
		for _, t := range many {
			if t != "null" {
				return t
			}
		}
	}
	if s.Properties != nil {
		return "object"
	}
	return ""
}

func minimalValue(raw json.RawMessage, depth int) any {
	var s jsonSchema
	if depth > maxSchemaDepth || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	for _, given := range append([]json.RawMessage{s.Const, s.Default}, append(s.Enum, s.Examples...)...) {
		var v any
		if len(given) > 0 && json.Unmarshal(given, &v) == nil && v != nil {
			return v
		}
	}
	switch s.schemaType() {
	case "object":
		out := map[string]any{}
		for _, name := range s.Required {
			if sub, ok := s.Properties[name]; ok {
				out[name] = minimalValue(sub, depth+1)
			} else {
				out[name] = "mcpflight"
			}
		}
		return out
	case "string":
		if s.MinLength > len("mcpflight") {
			return strings.Repeat("m", s.MinLength)
		}
		return "mcpflight"
	case "integer":
		if s.Minimum != nil {
			return int64(*s.Minimum)
		}
		return 1
	case "number":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	}
	for _, alt := range append(s.AnyOf, s.OneOf...) {
		if v := minimalValue(alt, depth+1); v != nil {
			return v
		}
	}
	return nil
}

// Guess is a tool drafted for one need, and why it was picked.
type Guess struct {
	// Need is slow, effect, log or task.
	Need string
	Tool Tool
	// Why says what the guess rests on, for the user to confirm.
	Why string
}

// Draft is a profile drafted from tools/list for the user to confirm.
type Draft struct {
	// Profile is the drafted profile; every tool in it is a guess.
	Profile *Profile
	// Guesses are the needs filled, with their reasons.
	Guesses []Guess
	// Tools are the tools listed, by name, with their minimal arguments.
	Tools []Guess
	// Trials say what calling the slow tool's candidates showed (TrySlow).
	Trials []string
	// LacksWhy says, for each need the draft states the server lacks
	// (Profile.Lacks), what that rests on.
	LacksWhy map[string]string
	// listed are the tools listed, sorted by name.
	listed []ListedTool
}

// needWords are the words of a tool's name or description that suggest
// it fills a need.
var needWords = map[string]*regexp.Regexp{
	"slow":   regexp.MustCompile(`(?i)\b(slow|long|progress|sleep|wait|delay|duration|running)`),
	"effect": regexp.MustCompile(`(?i)\b(write|create|add|set|update|delete|remove|increment|toggle|save|store|insert|effect)`),
	"log":    regexp.MustCompile(`(?i)\b(log|logging|logs|notif)`),
}

// controlArguments are the tool arguments the io.mcpflight/control
// extension gives the client to choose per operation (the operation key
// that names its checkpoints, and whether it waits at them): on a target
// that offers the extension the checker sets them, so a draft leaves them
// out.
var controlArguments = []string{"key", "gated"}

// DraftProfile drafts a profile named name from the tools a server
// lists (controlled: the server offers the io.mcpflight/control
// extension, whose per-operation arguments the draft leaves out): the task tool is one whose execution.taskSupport is "required"
// (else "optional"), which tools/list says outright; the slow, effect and
// log tools are guesses from the words of each tool's name and
// description. Every tool gets the minimal arguments its inputSchema
// accepts (MinimalArguments). The draft is for the user to confirm: a
// guess may be wrong, and a slow tool's arguments may need a duration or
// a step count.
func DraftProfile(name string, tools []ListedTool, controlled bool) Draft {
	d := Draft{Profile: &Profile{Name: name, Description: "drafted by mcpflight profile init from tools/list; confirm every guess"}}
	args := func(t ListedTool) map[string]any {
		a := MinimalArguments(t.InputSchema)
		if controlled {
			for _, k := range controlArguments {
				delete(a, k)
			}
		}
		return a
	}
	sorted := append([]ListedTool(nil), tools...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	d.listed = sorted
	for _, t := range sorted {
		d.Tools = append(d.Tools, Guess{Tool: Tool{Name: t.Name, Arguments: args(t)}, Why: "taskSupport " + orForbidden(t.TaskSupport)})
	}
	taken := map[string]bool{}
	pick := func(need string, match func(ListedTool) (bool, string)) {
		for _, t := range sorted {
			if taken[t.Name] && need != "task" {
				continue
			}
			if ok, why := match(t); ok {
				g := Guess{Need: need, Tool: Tool{Name: t.Name, Arguments: args(t)}, Why: why}
				d.Guesses = append(d.Guesses, g)
				taken[t.Name] = true
				return
			}
		}
	}
	for _, want := range []string{"required", "optional"} {
		if !hasNeed(d.Guesses, "task") {
			pick("task", func(t ListedTool) (bool, string) {
				return t.TaskSupport == want, fmt.Sprintf("tools/list gives it execution.taskSupport %q", want)
			})
		}
	}
	// A word in a tool's name says more than one in a description: every
	// name is tried before any description.
	for _, need := range []string{"slow", "log", "effect"} {
		re := needWords[need]
		for _, field := range []string{"name", "description"} {
			if hasNeed(d.Guesses, need) {
				break
			}
			pick(need, func(t ListedTool) (bool, string) {
				if t.TaskSupport == "required" {
					return false, "" // cannot be called without a task
				}
				text := t.Name
				if field == "description" {
					text = t.Description
				}
				if m := re.FindString(text); m != "" {
					return true, fmt.Sprintf("a guess: its %s has %q", field, strings.ToLower(m))
				}
				return false, ""
			})
		}
	}
	for i, g := range d.Guesses {
		tool := g.Tool
		switch g.Need {
		case "slow":
			for _, t := range sorted {
				if t.Name == tool.Name {
					if paced, steps := slowPace(t.InputSchema, tool.Arguments); paced {
						d.Guesses[i].Why += "; a short run set from its inputSchema's step and duration properties"
						d.Profile.SlowSteps = steps
					}
				}
			}
			d.Profile.Slow = &tool
		case "effect":
			d.Profile.Effect = &tool
		case "log":
			d.Profile.Log = &tool
		case "task":
			d.Profile.Task = &tool
		}
	}
	return d
}

// paceWords name the properties of a slow tool that set how long it runs.
var (
	stepsWord    = regexp.MustCompile(`(?i)^(steps?|count|iterations?|ticks?)$`)
	millisWord   = regexp.MustCompile(`(?i)(ms|millis|milliseconds)$`)
	durationWord = regexp.MustCompile(`(?i)(duration|seconds|secs|delay|sleep|wait)`)
)

// slowPace sets, in args, the properties of a slow tool's inputSchema
// that pace it (a step count of 3, a duration of 1.5 s) so that the
// guess runs about as long as the catalogue wants; it reports whether it
// set any, and the step count (0 when none).
func slowPace(schema json.RawMessage, args map[string]any) (bool, int) {
	var s jsonSchema
	if json.Unmarshal(schema, &s) != nil {
		return false, 0
	}
	paced, steps := false, 0
	for name, raw := range s.Properties {
		var p jsonSchema
		if json.Unmarshal(raw, &p) != nil {
			continue
		}
		typ := p.schemaType()
		if typ != "number" && typ != "integer" {
			continue
		}
		switch {
		case stepsWord.MatchString(name):
			args[name], steps, paced = 3, 3, true
		case durationWord.MatchString(name) && millisWord.MatchString(name):
			args[name], paced = 1500, true
		case durationWord.MatchString(name) && typ == "number":
			args[name], paced = 1.5, true
		case durationWord.MatchString(name):
			args[name], paced = 2, true
		}
	}
	return paced, steps
}

func hasNeed(gs []Guess, need string) bool {
	for _, g := range gs {
		if g.Need == need {
			return true
		}
	}
	return false
}

func orForbidden(s string) string {
	if s == "" {
		return "absent (forbidden)"
	}
	return s
}

// YAML renders the draft as a profile file: the fields Parse reads, each
// guess with a comment saying what it rests on, and the tools the server
// lists, commented out, with their minimal arguments.
func (d Draft) YAML() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# A profile drafted by mcpflight profile init from the server's tools/list.\n")
	fmt.Fprintf(&b, "# Every tool below is a GUESS: confirm each (does the slow tool send progress\n")
	fmt.Fprintf(&b, "# when given a token? does the log tool log? does the effect tool change\n")
	fmt.Fprintf(&b, "# something you can observe?), fix its arguments, delete what does not fit,\n")
	fmt.Fprintf(&b, "# then run: mcpflight check --profile THIS-FILE …\n")
	fmt.Fprintf(&b, "name: %s\n", yamlString(d.Profile.Name))
	fmt.Fprintf(&b, "description: %s\n", yamlString(d.Profile.Description))
	for _, need := range []string{"slow", "effect", "log", "task"} {
		var g *Guess
		for i := range d.Guesses {
			if d.Guesses[i].Need == need {
				g = &d.Guesses[i]
			}
		}
		if need == NeedSlow {
			for _, tr := range d.Trials {
				fmt.Fprintf(&b, "# TRIED (slow): %s\n", tr)
			}
		}
		if g == nil {
			if _, lacked := d.LacksWhy[need]; !lacked {
				fmt.Fprintf(&b, "# %s: no tool of tools/list looks like one; name it here if the server has one\n", need)
			}
			continue
		}
		fmt.Fprintf(&b, "# GUESS (%s): %s\n", need, oneLine(g.Why))
		if need == "slow" {
			fmt.Fprintf(&b, "# a slow tool should run for a second or more and send progress; add a duration or step count to its arguments\n")
		}
		fmt.Fprintf(&b, "%s:\n  name: %s\n  arguments: %s\n", need, yamlString(g.Tool.Name), jsonFlow(g.Tool.Arguments))
		if need == "slow" && d.Profile.SlowSteps > 0 {
			fmt.Fprintf(&b, "slowSteps: %d  # the progress notifications it sends with these arguments (a guess)\n", d.Profile.SlowSteps)
		}
	}
	b.WriteString(d.lacksLines())
	fmt.Fprintf(&b, "# The tools the server lists, with the minimal arguments their inputSchema accepts:\n")
	for _, t := range d.Tools {
		fmt.Fprintf(&b, "#   %s %s  (%s)\n", oneLine(t.Tool.Name), jsonFlow(t.Tool.Arguments), oneLine(t.Why))
	}
	return b.String()
}

// yamlString is s as a double-quoted YAML (and JSON) string: control
// characters escaped, so untrusted text cannot break the file.
func yamlString(s string) string {
	out, _ := json.Marshal(s)
	return string(out)
}

// jsonFlow is v as one line of JSON, which YAML reads as a flow mapping.
func jsonFlow(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(out)
}

// oneLine keeps untrusted text on one comment line.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
