package profile

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMinimalArguments(t *testing.T) {
	tests := []struct {
		name, schema string
		want         map[string]any
	}{
		{"no schema", ``, map[string]any{}},
		{"not an object", `"none"`, map[string]any{}},
		{"nothing required", `{"type":"object","properties":{"a":{"type":"string"}}}`, map[string]any{}},
		{"each type", `{"type":"object","required":["s","i","n","b","a","o"],"properties":{
			"s":{"type":"string"},"i":{"type":"integer","minimum":2},"n":{"type":"number"},"b":{"type":"boolean"},
			"a":{"type":"array"},"o":{"type":"object","required":["x"],"properties":{"x":{"type":"string"}}}}}`,
			map[string]any{"s": "mcpflight", "i": int64(2), "n": 1, "b": false, "a": []any{}, "o": map[string]any{"x": "mcpflight"}}},
		{"given values first", `{"type":"object","required":["e","d","c"],"properties":{
			"e":{"type":"string","enum":["error","info"]},"d":{"type":"number","default":10},"c":{"const":"fixed"}}}`,
			map[string]any{"e": "error", "d": 10.0, "c": "fixed"}},
		{"a required property the schema does not describe", `{"type":"object","required":["x"]}`, map[string]any{"x": "mcpflight"}},
		{"nullable type", `{"type":"object","required":["v"],"properties":{"v":{"type":["null","integer"]}}}`, map[string]any{"v": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MinimalArguments(json.RawMessage(tt.schema))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("MinimalArguments (-want +got):\n%s", d)
			}
		})
	}
}

// A schema nested deeper than the bound ends in null, not in a stack
// overflow.
func TestMinimalArgumentsDeepSchema(t *testing.T) {
	const depth = 10_000
	schema := strings.Repeat(`{"type":"object","required":["x"],"properties":{"x":`, depth) + `{"type":"string"}` + strings.Repeat(`}}`, depth)
	if got := MinimalArguments(json.RawMessage(schema)); got == nil {
		t.Fatal("nil arguments")
	}
}

func TestDraftProfile(t *testing.T) {
	obj := func(s string) json.RawMessage { return json.RawMessage(s) }
	tools := []ListedTool{
		{Name: "worker", TaskSupport: "required", InputSchema: obj(`{"type":"object","required":["key"],"properties":{"key":{"type":"string"}}}`)},
		{Name: "long-op", Description: "waits", InputSchema: obj(`{"type":"object","properties":{"duration":{"type":"number"},"steps":{"type":"integer"}}}`)},
		{Name: "say", Description: "sends log messages", InputSchema: obj(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`)},
		{Name: "write-note", InputSchema: obj(`{"type":"object","required":["key"],"properties":{"key":{"type":"string"}}}`)},
		{Name: "evil\nname: injected", Description: "\x1b[2Jnothing"},
	}
	d := DraftProfile("demo", tools, false)
	want := &Profile{Name: "demo", Description: d.Profile.Description,
		Slow:      &Tool{Name: "long-op", Arguments: map[string]any{"duration": 1.5, "steps": 3}},
		SlowSteps: 3,
		Effect:    &Tool{Name: "write-note", Arguments: map[string]any{"key": "mcpflight"}},
		Log:       &Tool{Name: "say", Arguments: map[string]any{"text": "mcpflight"}},
		Task:      &Tool{Name: "worker", Arguments: map[string]any{"key": "mcpflight"}},
	}
	if diff := cmp.Diff(want, d.Profile); diff != "" {
		t.Errorf("draft (-want +got):\n%s", diff)
	}
	// The YAML is a profile Parse accepts, the same one, and every guess
	// is marked.
	parsed, err := Parse([]byte(d.YAML()))
	if err != nil {
		t.Fatalf("the draft does not parse: %v\n%s", err, d.YAML())
	}
	want.Slow.Arguments["steps"] = 3.0 // JSON numbers
	if diff := cmp.Diff(want, parsed); diff != "" {
		t.Errorf("parsed draft (-want +got):\n%s", diff)
	}
	if n := strings.Count(d.YAML(), "# GUESS ("); n != 4 {
		t.Errorf("%d guesses marked, want 4:\n%s", n, d.YAML())
	}
	if strings.Contains(d.YAML(), "\x1b") || strings.Contains(d.YAML(), "\nname: injected") {
		t.Errorf("untrusted text broke the file:\n%s", d.YAML())
	}
	// On a controlled target the operation key is the checker's.
	if c := DraftProfile("demo", tools, true); len(c.Profile.Task.Arguments) != 0 || len(c.Profile.Effect.Arguments) != 0 {
		t.Errorf("controlled draft keeps the control arguments: %+v %+v", c.Profile.Task, c.Profile.Effect)
	}
}
