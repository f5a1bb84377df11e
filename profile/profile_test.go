package profile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// example is the profile in testdata/example.{json,yaml}.
func example() *Profile {
	return &Profile{
		Name:        "example",
		Description: "an example profile for a server with a slow tool and a logging tool",
		Slow:        &Tool{Name: "long-task", Arguments: map[string]any{"seconds": 1.5, "steps": float64(4)}},
		SlowSteps:   4,
		Log:         &Tool{Name: "say", Arguments: map[string]any{"text": "hello"}},
		GraceMillis: 800,
	}
}

func TestLoadExamples(t *testing.T) {
	for _, file := range []string{"example.json", "example.yaml"} {
		t.Run(file, func(t *testing.T) {
			got, err := Load(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(example(), got); diff != "" {
				t.Errorf("Load (-want +got):\n%s", diff)
			}
			if got.Grace() != 800*time.Millisecond {
				t.Errorf("Grace() = %v, want 800ms", got.Grace())
			}
		})
	}
}

func TestLoadNamesAfterFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "my-server.yml")
	if err := os.WriteFile(path, []byte("slow: {name: work}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "my-server" {
		t.Errorf("Name = %q, want my-server", p.Name)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want os.ErrNotExist", err)
	}
	if errors.Is(err, ErrInvalid) {
		t.Errorf("a missing file is not an invalid profile: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		data   string
		want   string // a substring of the error
	}{
		{"json unknown field", JSON, `{"name":"x","slowTool":{"name":"a"}}`, `unknown field "slowTool"`},
		{"json unknown tool field", JSON, `{"slow":{"name":"a","args":{}}}`, `unknown field "args"`},
		{"yaml unknown field", YAML, "name: x\ngrace: 3\n", `unknown field "grace"`},
		{"json empty tool name", JSON, `{"slow":{"name":""}}`, "slow: the tool name is empty"},
		{"yaml empty tool name", YAML, "effect:\n  arguments: {a: 1}\n", "effect: the tool name is empty"},
		{"blank tool name", JSON, `{"log":{"name":"  "}}`, "log: the tool name is empty"},
		{"negative steps", JSON, `{"slowSteps":-1}`, "slowSteps is negative"},
		{"negative grace", YAML, "graceMs: -5", "graceMs is negative"},
		{"wrong type", JSON, `{"graceMs":"300"}`, `field "graceMs" must be int`},
		{"trailing data", JSON, `{"name":"a"} {"name":"b"}`, "unexpected data after"},
		{"bad json", JSON, `{"name":`, "unexpected EOF"},
		{"bad yaml", YAML, "name: [unclosed", "YAML"},
		{"empty yaml", YAML, "# nothing\n", "empty"},
		{"yaml not a mapping", YAML, "- a\n- b\n", "cannot unmarshal array"},
		{"yaml non-string key", YAML, "slow:\n  name: a\n  arguments: {1: x}\n", "keys must be strings"},
		{"unknown format", Format("toml"), "", "unknown format"},
		{"lacks an unknown need", YAML, "lacks: [slow, observer]\n", `lacks: unknown need "observer"`},
		{"lacks a named tool", YAML, "slow:\n  name: wait\nlacks: [log, slow]\n", `lacks slow, yet names a slow tool ("wait")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFormat([]byte(tt.data), tt.format)
			if err == nil {
				t.Fatalf("ParseFormat(%q) succeeded, want an error containing %q", tt.data, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestParseDetectsFormat(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"json", ` {"name":"n","slow":{"name":"s"}}`},
		{"yaml", "name: n\nslow:\n  name: s\n"},
		{"yaml flow", "name: n\nslow: {name: s}"},
	}
	want := &Profile{Name: "n", Slow: &Tool{Name: "s"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuiltin(t *testing.T) {
	tests := []struct {
		name      string
		slow      string
		slowArgs  map[string]any
		slowSteps int
		effect    bool
		log       bool
		grace     time.Duration
	}{
		{Reference, "slow", map[string]any{"steps": 3}, 3, true, true, 300 * time.Millisecond},
		{ServerEverything, "trigger-long-running-operation", map[string]any{"duration": 1.5, "steps": 3}, 3, false, false, 1200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Builtin(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Validate(); err != nil {
				t.Errorf("built-in profile is invalid: %v", err)
			}
			if p.Name != tt.name || p.Slow == nil || p.Slow.Name != tt.slow {
				t.Fatalf("Builtin(%q) = %+v", tt.name, p)
			}
			if diff := cmp.Diff(tt.slowArgs, p.Slow.Arguments); diff != "" {
				t.Errorf("slow arguments (-want +got):\n%s", diff)
			}
			if p.SlowSteps != tt.slowSteps || (p.Effect != nil) != tt.effect || (p.Log != nil) != tt.log || p.Grace() != tt.grace {
				t.Errorf("Builtin(%q) = %+v", tt.name, p)
			}
			// A caller's change must not leak into the next copy.
			p.Slow.Arguments["steps"] = 99
			again, _ := Builtin(tt.name)
			if again.Slow.Arguments["steps"] == 99 {
				t.Error("Builtin returns shared state")
			}
		})
	}
	if diff := cmp.Diff([]string{Reference, ServerEverything}, BuiltinNames()); diff != "" {
		t.Errorf("BuiltinNames (-want +got):\n%s", diff)
	}
	if _, err := Builtin("nope"); !errors.Is(err, ErrUnknownBuiltin) {
		t.Errorf("Builtin(nope) = %v, want ErrUnknownBuiltin", err)
	}
}

func TestResolve(t *testing.T) {
	p, err := Resolve(Reference)
	if err != nil || p.Name != Reference {
		t.Fatalf("Resolve(reference) = %v, %v", p, err)
	}
	p, err = Resolve(filepath.Join("testdata", "example.yaml"))
	if err != nil || p.Name != "example" {
		t.Fatalf("Resolve(file) = %v, %v", p, err)
	}
	_, err = Resolve("no-such-profile")
	if err == nil || !strings.Contains(err.Error(), "neither a built-in (reference, server-everything)") {
		t.Errorf("Resolve(no-such-profile) = %v", err)
	}
}

func TestGraceDefault(t *testing.T) {
	var nilProfile *Profile
	if got := nilProfile.Grace(); got != time.Second {
		t.Errorf("nil Grace() = %v, want 1s", got)
	}
	if got := (&Profile{}).Grace(); got != time.Second {
		t.Errorf("zero Grace() = %v, want 1s", got)
	}
}

// FuzzParse checks that the parser never panics, that whatever it accepts
// is valid, and that an accepted profile survives a JSON round trip.
func FuzzParse(f *testing.F) {
	for _, file := range []string{"example.json", "example.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"slow":{"name":""}}`))
	f.Add([]byte("slow: {name: a, arguments: {x: [1, 2, {y: null}]}}\ngraceMs: 5\n"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid profile: %v", err)
		}
	})
}

func TestYAMLEdges(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // substring of the error, or "" for success
	}{
		{"alias", "slow: &t {name: a}\neffect: *t\n", ""},
		{"self alias", "slow: &a {name: x, arguments: {self: *a}}\n", "refers to itself"},
		{"duplicate key", "name: a\nname: b\n", `key "name" appears twice`},
		{"alias bomb", bomb(), "nodes"},
		{"nan", "slow: {name: a, arguments: {x: .nan}}", "not a number JSON can carry"},
		{"many keys", manyKeys(20000), `key "a" appears twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No wall-clock bound here: a loaded machine overran one (5 s
			// under -race at load 28). BenchmarkYAMLEdges measures it.
			_, err := ParseFormat([]byte(tt.data), YAML)
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// bomb is a document whose aliases expand to 10^8 nodes.
func bomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 8; i++ {
		p := "*a" + strconv.Itoa(i-1)
		b.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [" + strings.Repeat(p+", ", 9) + p + "]\n")
	}
	return b.String()
}

// manyKeys nests n mappings that all use the key "a": yaml.v3's own
// duplicate-key check is quadratic in this.
func manyKeys(n int) string { return strings.Repeat("a:\n ", n) }

// BenchmarkYAMLEdges measures the two inputs that would be quadratic or
// exponential without the converter's own bounds: an alias bomb (refused
// by its node count) and 20 000 keys (duplicate check in one pass).
// Each must parse in a fraction of a second; the figures measured are in
// docs/performance.md.
func BenchmarkYAMLEdges(b *testing.B) {
	for _, in := range []struct{ name, data string }{{"alias-bomb", bomb()}, {"many-keys", manyKeys(20000)}} {
		b.Run(in.name, func(b *testing.B) {
			for b.Loop() {
				_, _ = ParseFormat([]byte(in.data), YAML)
			}
		})
	}
}

// TestLacks: a profile states the needs its server has no tool for, in
// either format, and says nothing of those it does not list.
func TestLacks(t *testing.T) {
	p, err := ParseFormat([]byte("name: memory\nlacks: [slow, log, task]\n"), YAML)
	if err != nil {
		t.Fatal(err)
	}
	for need, want := range map[string]bool{NeedSlow: true, NeedLog: true, NeedTask: true, NeedEffect: false} {
		if got := p.LacksTool(need); got != want {
			t.Errorf("LacksTool(%s) = %v, want %v", need, got, want)
		}
	}
	if (*Profile)(nil).LacksTool(NeedSlow) {
		t.Error("a nil profile states nothing")
	}
}
