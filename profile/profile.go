// Package profile says how to use a particular server under test: which
// tool serves each need of the catalogue (a long-running tool with
// progress, a tool with a side effect, a tool that logs) and with what
// arguments. Cases whose needs a profile does not meet are skipped.
package profile

import (
	"encoding/json"
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
	// GraceMillis is the observation window for things that must not
	// happen, used when the target offers no checkpoints.
	GraceMillis int `json:"graceMs,omitempty"`
}

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

// Parse reads a JSON profile.
func Parse(data []byte) (*Profile, error) {
	var p Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
