// Package profile says how to use a particular server under test: which
// tool serves each need of the catalogue (a long-running tool with
// progress, a tool with a side effect, a tool that logs) and with what
// arguments. Cases whose needs a profile does not meet are skipped.
package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Tool is a tool name and the arguments to call it with.
type Tool struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// Profile maps the catalogue's needs to a target's tools.
type Profile struct {
	// Name identifies the profile.
	Name string `json:"name"`
	// Description says what target it is for.
	Description string `json:"description,omitempty"`
	// Slow is a long-running tool that sends progress when given a token.
	Slow *Tool `json:"slow,omitempty"`
	// SlowSteps is how many progress notifications Slow sends (0: unknown).
	SlowSteps int `json:"slowSteps,omitempty"`
	// Effect is a tool with an observable side effect.
	Effect *Tool `json:"effect,omitempty"`
	// Log is a tool that emits notifications/message.
	Log *Tool `json:"log,omitempty"`
	// Task is a tool to call as a durable task (2025-11-25 tasks): its
	// execution.taskSupport is "required" or "optional".
	Task *Tool `json:"task,omitempty"`
	// Observer is a tool or resource that reports how handlers ended
	// (docs/observer.md); cases that must see past the wire need it.
	Observer *Observer `json:"observer,omitempty"`
	// GraceMillis is the observation window for things that must not
	// happen, used when the target offers no checkpoints.
	GraceMillis int `json:"graceMs,omitempty"`
	// Lacks states the needs the server has no tool for (NeedSlow,
	// NeedEffect, NeedLog, NeedTask): the cases that need one do not
	// apply to it, and are skipped as not applicable, so that a run
	// against a server without long-running work can be conformant. A
	// need the profile both names a tool for and lacks is an error.
	Lacks []string `json:"lacks,omitempty"`
}

// The needs a profile maps to tools, by their field names.
const (
	NeedSlow   = "slow"
	NeedEffect = "effect"
	NeedLog    = "log"
	NeedTask   = "task"
)

// Needs lists the needs a profile can map to a tool, in the order the
// catalogue and the drafts name them.
func Needs() []string { return []string{NeedSlow, NeedEffect, NeedLog, NeedTask} }

// NeedWords says what each need's tool is, for reasons a person reads.
func NeedWords(need string) string {
	switch need {
	case NeedSlow:
		return "long-running tool with progress"
	case NeedEffect:
		return "tool with an observable side effect"
	case NeedLog:
		return "tool that logs"
	case NeedTask:
		return "task tool"
	}
	return need + " tool"
}

// LacksTool reports whether the profile states that the server has no
// tool for need; false for a nil profile.
func (p *Profile) LacksTool(need string) bool { return p != nil && slices.Contains(p.Lacks, need) }

// tool is the profile's tool for need, nil when it names none.
func (p *Profile) tool(need string) *Tool {
	switch need {
	case NeedSlow:
		return p.Slow
	case NeedEffect:
		return p.Effect
	case NeedLog:
		return p.Log
	case NeedTask:
		return p.Task
	}
	return nil
}

// NamesObserver reports whether the profile names an observer; false for
// a nil profile.
func (p *Profile) NamesObserver() bool { return p != nil && p.Observer != nil }

// Grace returns the observation window, one second by default.
func (p *Profile) Grace() time.Duration {
	if p == nil || p.GraceMillis <= 0 {
		return time.Second
	}
	return time.Duration(p.GraceMillis) * time.Millisecond
}

// CloneArgs returns a copy of a tool's arguments that the caller may change.
func (t *Tool) CloneArgs() map[string]any {
	out := make(map[string]any, len(t.Arguments)+4)
	for k, v := range t.Arguments {
		out[k] = v
	}
	return out
}

// ErrInvalid is matched (errors.Is) by every error that says a profile's
// content is wrong, as opposed to a file that could not be read.
var ErrInvalid = errors.New("invalid profile")

// ErrUnknownBuiltin is matched by the error of Builtin for a name that is
// not a built-in profile.
var ErrUnknownBuiltin = errors.New("unknown built-in profile")

// Format is a profile's file format.
type Format string

// Formats Parse understands.
const (
	JSON Format = "json"
	YAML Format = "yaml"
)

// Parse reads a profile in JSON or YAML: text whose first non-blank byte
// is '{' is JSON, anything else YAML. See ParseFormat.
func Parse(data []byte) (*Profile, error) {
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		return ParseFormat(data, JSON)
	}
	return ParseFormat(data, YAML)
}

// ParseFormat reads a profile in the given format and validates it. Both
// formats have the same fields (the JSON names: name, description, slow,
// slowSteps, effect, log, task, observer, graceMs, lacks; a tool has name and
// arguments), and an
// unknown field is an error in both. Every content error matches
// ErrInvalid.
func ParseFormat(data []byte, format Format) (*Profile, error) {
	switch format {
	case JSON:
	case YAML:
		j, err := yamlToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%w: YAML: %w", ErrInvalid, err)
		}
		// Through JSON, so that both formats share one strict decoder.
		data = j
	default:
		return nil, fmt.Errorf("%w: unknown format %q", ErrInvalid, format)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, describeJSONError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: unexpected data after the profile object", ErrInvalid)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// describeJSONError rewords the decoder's errors for a person editing a
// profile by hand.
func describeJSONError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Errorf("field %q must be %s, not %s: %w", typeErr.Field, typeErr.Type, typeErr.Value, err)
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		field := strings.TrimPrefix(msg, "json: unknown field ")
		return fmt.Errorf("unknown field %s (known: name, description, slow, slowSteps, effect, log, task, observer, graceMs, lacks; a tool has name and arguments; an observer has tool or resource, arguments, started, completed, cancelled and lastStep): %w", field, err)
	}
	return err
}

// Validate checks a profile: every tool it names has a non-empty name, no
// count or duration is negative, and every need it lacks is a known one
// for which it names no tool. Its errors match ErrInvalid.
func (p *Profile) Validate() error {
	if p == nil {
		return fmt.Errorf("%w: no profile", ErrInvalid)
	}
	for _, need := range Needs() {
		if t := p.tool(need); t != nil && strings.TrimSpace(t.Name) == "" {
			return fmt.Errorf("%w: %s: the tool name is empty", ErrInvalid, need)
		}
	}
	if p.SlowSteps < 0 {
		return fmt.Errorf("%w: slowSteps is negative (%d)", ErrInvalid, p.SlowSteps)
	}
	if p.GraceMillis < 0 {
		return fmt.Errorf("%w: graceMs is negative (%d)", ErrInvalid, p.GraceMillis)
	}
	for _, need := range p.Lacks {
		switch {
		case !slices.Contains(Needs(), need):
			return fmt.Errorf("%w: lacks: unknown need %q (known: %s)", ErrInvalid, need, strings.Join(Needs(), ", "))
		case p.tool(need) != nil:
			return fmt.Errorf("%w: lacks %s, yet names a %s tool (%q): keep one", ErrInvalid, need, need, p.tool(need).Name)
		}
	}
	if p.Observer != nil {
		return p.Observer.validate()
	}
	return nil
}

// Load reads a profile file. A .json file is JSON, a .yaml or .yml file
// YAML, and any other name is taken as Parse decides. A profile without
// a name is named after the file.
func Load(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	var p *Profile
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		p, err = ParseFormat(data, JSON)
	case ".yaml", ".yml":
		p, err = ParseFormat(data, YAML)
	default:
		p, err = Parse(data)
	}
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return p, nil
}

// Built-in profile names.
const (
	// Reference is the profile of mcpflight's own reference server.
	Reference = "reference"
	// ServerEverything is the profile of
	// @modelcontextprotocol/server-everything@2026.8.31.
	ServerEverything = "server-everything"
)

// builtins returns fresh copies of the built-in profiles.
func builtins() map[string]*Profile {
	return map[string]*Profile{
		Reference: {
			Name:        Reference,
			Description: "mcpflight's reference server (mcpflight serve --stdio)",
			Slow:        &Tool{Name: "slow", Arguments: map[string]any{"steps": 3}},
			SlowSteps:   3,
			Effect:      &Tool{Name: "effect"},
			Log:         &Tool{Name: "log"},
			Task:        &Tool{Name: "task_worker", Arguments: map[string]any{"ticks": 3}},
			Observer: &Observer{Tool: "observer", Started: "/started", Completed: "/completed",
				Cancelled: "/cancelled", LastStep: "/lastStep"},
			GraceMillis: 300,
		},
		ServerEverything: {
			Name:        ServerEverything,
			Description: "@modelcontextprotocol/server-everything@2026.8.31 (npx @modelcontextprotocol/server-everything stdio)",
			// Three steps of 0.5 s: a step to cancel after, two to see
			// whether the cancel stopped the work, and a second between
			// step 1 and the end for the cancel to get there. Shorter
			// steps lose that race on a loaded machine, where a round
			// trip can take half a second: the work ends before the
			// cancel is sent or handled, and the case cannot judge it
			// (docs/profiles.md, "Choosing durations").
			Slow: &Tool{Name: "trigger-long-running-operation",
				Arguments: map[string]any{"duration": 1.5, "steps": 3}},
			SlowSteps: 3,
			// simulate-research-query: taskSupport "required", four stages
			// of one second each, pollInterval 1000, ttl 300000.
			Task:        &Tool{Name: "simulate-research-query", Arguments: map[string]any{"topic": "mcpflight"}},
			GraceMillis: 1200,
		},
	}
}

// BuiltinFor returns the built-in profile written for the server that
// calls itself serverName in its serverInfo, or "" when there is none.
func BuiltinFor(serverName string) string {
	switch serverName {
	case "mcp-servers/everything", "example-servers/everything":
		return ServerEverything
	}
	return ""
}

// BuiltinNames lists the built-in profiles, sorted.
func BuiltinNames() []string {
	return []string{Reference, ServerEverything}
}

// Builtin returns a fresh copy of a built-in profile, which the caller
// may change.
func Builtin(name string) (*Profile, error) {
	p, ok := builtins()[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (built-in: %s)", ErrUnknownBuiltin, name, strings.Join(BuiltinNames(), ", "))
	}
	return p, nil
}

// Resolve returns the built-in profile called nameOrPath, or else loads
// the file at that path. A name that is neither gets an error naming the
// built-ins.
func Resolve(nameOrPath string) (*Profile, error) {
	if p, err := Builtin(nameOrPath); err == nil {
		return p, nil
	}
	if _, err := os.Stat(nameOrPath); err != nil {
		return nil, fmt.Errorf("profile %q is neither a built-in (%s) nor a readable file: %w",
			nameOrPath, strings.Join(BuiltinNames(), ", "), err)
	}
	return Load(nameOrPath)
}
