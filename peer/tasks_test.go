package peer

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeepProgressToken: a task's token stays live after its
// CreateTaskResult (PRG-9) until EndProgress; progress after that is late.
func TestKeepProgressToken(t *testing.T) {
	ctx := testCtx(t)
	s, fs := newPair(t)
	call, err := s.Start(ctx, "tools/call", TaskParams(map[string]any{"name": "w"}, 1000), WithProgress(), KeepProgressToken())
	if err != nil {
		t.Fatal(err)
	}
	req := fs.read()
	// barrier sends a ping whose answer follows every frame written before.
	barrier := func(before ...string) {
		t.Helper()
		p, err := s.Start(ctx, "ping", nil)
		if err != nil {
			t.Fatal(err)
		}
		fs.read()
		for _, f := range before {
			fs.write(f)
		}
		fs.write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, p.ID))
		if _, err := p.Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	progress := func(v int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d}}`, call.Token, v)
	}
	barrier(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":1000}}}`, req.ID),
		progress(1))
	if got := len(call.ProgressSeen()); got != 1 || len(call.Violations()) != 0 {
		t.Errorf("progress after CreateTaskResult: %d seen, violations %v", got, call.Violations())
	}
	s.EndProgress(call)
	barrier(progress(2))
	if got := len(call.LateProgress()); got != 1 {
		t.Errorf("progress after EndProgress: %d late, want 1", got)
	}
}

func TestParseCreateTaskResult(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		wantID  string
		wantErr bool
	}{
		{`{"task":{"taskId":"a","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":null}}`, "a", false},
		{`{"content":[],"isError":false}`, "", true},
		{`{"task":null}`, "", true},
		{`[]`, "", true},
	} {
		got, err := ParseCreateTaskResult(json.RawMessage(tc.raw))
		if (err != nil) != tc.wantErr || got.TaskID != tc.wantID {
			t.Errorf("%s: %q, %v", tc.raw, got.TaskID, err)
		}
	}
}

func TestRelatedTaskIDAndCapabilities(t *testing.T) {
	if id, ok := RelatedTaskID(json.RawMessage(`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`)); !ok || id != "t" {
		t.Errorf("RelatedTaskID: %q %v", id, ok)
	}
	if _, ok := RelatedTaskID(json.RawMessage(`{"_meta":{}}`)); ok {
		t.Error("RelatedTaskID found metadata that is not there")
	}
	r := &InitResult{Capabilities: map[string]json.RawMessage{"tasks": json.RawMessage(`{"cancel":{},"requests":{"tools":{"call":{}}}}`)}}
	want := TaskCapabilities{Declared: true, Cancel: true, ToolsCall: true}
	if diff := cmp.Diff(want, r.Tasks()); diff != "" {
		t.Errorf("Tasks (-want +got):\n%s", diff)
	}
	if got := (&InitResult{}).Tasks(); got.Declared {
		t.Errorf("no capability: %+v", got)
	}
}
