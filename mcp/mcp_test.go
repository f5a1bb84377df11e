package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

func TestTaskTerminal(t *testing.T) {
	for status, want := range map[string]bool{
		TaskWorking: false, TaskInputRequired: false,
		TaskCompleted: true, TaskFailed: true, TaskCancelled: true, "": false,
	} {
		if got := TaskTerminal(status); got != want {
			t.Errorf("TaskTerminal(%q) = %v, want %v", status, got, want)
		}
	}
}

// TestControlReachedKeepsIDType: the request ID of an await answer keeps
// its JSON type across the wire, as on both sides of the extension.
func TestControlReachedKeepsIDType(t *testing.T) {
	for _, id := range []jsonrpc.ID{jsonrpc.IntID(0), jsonrpc.StringID("0"), jsonrpc.IntID(5)} {
		raw, err := json.Marshal(ControlReached{Checkpoint: "k/end", RequestID: id, Outcome: OutcomeCompleted})
		if err != nil {
			t.Fatal(err)
		}
		var got ControlReached
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got.RequestID != id || got.Outcome != OutcomeCompleted {
			t.Errorf("%s decoded to %+v", raw, got)
		}
	}
	var bad ControlReached
	if err := json.Unmarshal([]byte(`{"checkpoint":"k/end","requestId":1.5}`), &bad); err == nil {
		t.Error("a fractional requestId decoded without error")
	}
	if diff := cmp.Diff(`{"checkpoint":"a"}`, string(must(json.Marshal(ControlCheckpoint{Checkpoint: "a"})))); diff != "" {
		t.Error(diff)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
