package profile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestObserverValidation(t *testing.T) {
	ok := `{"name":"p","observer":{"tool":"observe","started":"/s","completed":"/c","cancelled":"/x"}}`
	if _, err := Parse([]byte(ok)); err != nil {
		t.Fatalf("a valid observer: %v", err)
	}
	tests := []struct {
		name, profile, want string
	}{
		{"neither tool nor resource", `{"observer":{"started":"/s","completed":"/c","cancelled":"/x"}}`, "exactly one of tool and resource"},
		{"both", `{"observer":{"tool":"t","resource":"r://x","started":"/s","completed":"/c","cancelled":"/x"}}`, "exactly one of tool and resource"},
		{"arguments for a resource", `{"observer":{"resource":"r://x","arguments":{"a":1},"started":"/s","completed":"/c","cancelled":"/x"}}`, "arguments apply to a tool"},
		{"blank tool", `{"observer":{"tool":"  ","started":"/s","completed":"/c","cancelled":"/x"}}`, "blank"},
		{"no started", `{"observer":{"tool":"t","completed":"/c","cancelled":"/x"}}`, `started needs a JSON pointer`},
		{"no cancelled", `{"observer":{"tool":"t","started":"/s","completed":"/c"}}`, `cancelled needs a JSON pointer`},
		{"pointer without slash", `{"observer":{"tool":"t","started":"s","completed":"/c","cancelled":"/x"}}`, "must start with /"},
		{"bad escape", `{"observer":{"tool":"t","started":"/s","completed":"/c~2","cancelled":"/x"}}`, "~ must be followed by 0 or 1"},
		{"bad lastStep", `{"observer":{"tool":"t","started":"/s","completed":"/c","cancelled":"/x","lastStep":"x"}}`, "lastStep"},
		{"unknown member", `{"observer":{"tool":"t","started":"/s","completed":"/c","cancelled":"/x","running":"/r"}}`, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.profile))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrInvalid saying %q", err, tt.want)
			}
		})
	}
}

func TestObserverYAML(t *testing.T) {
	p, err := Parse([]byte(`
name: my-server
observer:
  resource: debug://handlers
  started: /handlers/started
  completed: /handlers/completed
  cancelled: /handlers/cancelled
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Observer{Resource: "debug://handlers", Started: "/handlers/started", Completed: "/handlers/completed", Cancelled: "/handlers/cancelled"}
	if diff := cmp.Diff(want, p.Observer); diff != "" {
		t.Errorf("observer (-want +got):\n%s", diff)
	}
}

func TestObserve(t *testing.T) {
	o := &Observer{Tool: "t", Started: "/n/started", Completed: "/n/done", Cancelled: "/a~1b/0", LastStep: "/m~0s"}
	tests := []struct {
		name, doc string
		want      Observation
		err       string
	}{
		{"nested, escaped, indexed", `{"n":{"started":3,"done":1},"a/b":[1,9],"m~s":2}`, Observation{Started: 3, Completed: 1, Cancelled: 1, LastStep: 2}, ""},
		{"missing member", `{"n":{"started":3},"a/b":[1],"m~s":2}`, Observation{}, `completed (/n/done): no member "done"`},
		{"index out of range", `{"n":{"started":3,"done":1},"a/b":[],"m~s":2}`, Observation{}, `no element "0"`},
		{"not a number", `{"n":{"started":"3","done":1},"a/b":[1],"m~s":2}`, Observation{}, "is a string, not a count"},
		{"negative", `{"n":{"started":-1,"done":1},"a/b":[1],"m~s":2}`, Observation{}, "is -1, not a count"},
		{"fractional", `{"n":{"started":1.5,"done":1},"a/b":[1],"m~s":2}`, Observation{}, "is 1.5, not a count"},
		{"into a scalar", `{"n":4,"a/b":[1],"m~s":2}`, Observation{}, `4 has no member "started"`},
		{"not JSON", `started=1`, Observation{}, "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := o.Observe(json.RawMessage(tt.doc))
			if tt.err != "" {
				if !errors.Is(err, ErrObservation) || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want ErrObservation saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("observation (-want +got):\n%s", diff)
			}
		})
	}
	noStep := &Observer{Tool: "t", Started: "/s", Completed: "/c", Cancelled: "/x"}
	got, err := noStep.Observe(json.RawMessage(`{"s":2,"c":0,"x":1}`))
	if err != nil || got != (Observation{Started: 2, Cancelled: 1, LastStep: -1}) || got.Running() != 1 {
		t.Errorf("without lastStep: %+v (running %d), %v", got, got.Running(), err)
	}
}

func TestObserverDocument(t *testing.T) {
	tool := &Observer{Tool: "t", Started: "/s", Completed: "/c", Cancelled: "/x"}
	res := &Observer{Resource: "r://x", Started: "/s", Completed: "/c", Cancelled: "/x"}
	tests := []struct {
		name   string
		o      *Observer
		result string
		want   string
		err    string
	}{
		{"structuredContent", tool, `{"content":[{"type":"text","text":"{\"s\":9}"}],"structuredContent":{"s":1}}`, `{"s":1}`, ""},
		{"text content", tool, `{"content":[{"type":"image","data":""},{"type":"text","text":"{\"s\":2}"}]}`, `{"s":2}`, ""},
		{"isError", tool, `{"content":[{"type":"text","text":"boom"}],"isError":true}`, "", "isError"},
		{"nothing", tool, `{"content":[]}`, "", "neither structuredContent nor text"},
		{"resource", res, `{"contents":[{"uri":"r://x","text":"{\"s\":3}"}]}`, `{"s":3}`, ""},
		{"resource without text", res, `{"contents":[{"uri":"r://x","blob":"AA=="}]}`, "", "no text content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.o.Document(json.RawMessage(tt.result))
			if tt.err != "" {
				if !errors.Is(err, ErrObservation) || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error %v, want ErrObservation saying %q", err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("document %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestObservationText: counts rendered for a chronology are read back
// whole, and text that is not an observation is refused.
func TestObservationText(t *testing.T) {
	o := Observation{Started: 3, Completed: 1, Cancelled: 2, LastStep: -1}
	got, err := ParseObservation(o.String())
	if err != nil || got != o {
		t.Errorf("ParseObservation(%q) = %+v, %v; want %+v", o.String(), got, err, o)
	}
	for _, bad := range []string{"", "started 1", "started x, completed 1, cancelled 0", "started -1, completed 0, cancelled 0"} {
		if _, err := ParseObservation(bad); err == nil {
			t.Errorf("ParseObservation(%q) took it", bad)
		}
	}
	tool := &Observer{Tool: "observer"}
	if m, p := tool.Request(); m != "tools/call" || p["name"] != "observer" || p["arguments"] == nil {
		t.Errorf("tool observer's request: %s %v", m, p)
	}
	res := &Observer{Resource: "debug://handlers"}
	if m, p := res.Request(); m != "resources/read" || p["uri"] != "debug://handlers" {
		t.Errorf("resource observer's request: %s %v", m, p)
	}
}
