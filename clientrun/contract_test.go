//go:build unix

package clientrun

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInstructionsRoundTrip(t *testing.T) {
	in := Instructions{Name: "cancel/x", ProtocolVersion: "2025-11-25", Transport: TransportStdio,
		Server:  &ServerCommand{Command: "/bin/mcpflight", Args: []string{"client-relay", "--socket", "/tmp/s"}},
		Connect: Connect{TimeoutMs: 300},
		Steps:   []Step{{Op: OpCall, Call: &CallStep{Tool: "slow", Progress: true, AbortAfterProgress: 1}}}}
	env, err := in.Environ()
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if vars[EnvScenario] != "cancel/x" || vars[EnvProtocolVersion] != "2025-11-25" {
		t.Errorf("environment %v", vars)
	}
	got, err := ReadInstructions(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if _, err := ReadInstructions(func(string) string { return "" }); err == nil {
		t.Error("no context: want an error")
	}
}

func TestParseReport(t *testing.T) {
	tests := []struct {
		line string
		want Report
		ok   bool
	}{
		{`{"step":1,"outcome":"result","text":"ok"}`, Report{Step: 1, Outcome: OutcomeResult, Text: "ok"}, true},
		{`  {"step":2,"call":1,"outcome":"aborted"}  `, Report{Step: 2, Call: 1, Outcome: OutcomeAborted}, true},
		{`debug: connecting`, Report{}, false},
		{`{"step":1}`, Report{}, false},
		{`{"step":`, Report{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, ok := ParseReport([]byte(tt.line))
			if ok != tt.ok || got != tt.want {
				t.Errorf("ParseReport(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCommandArgv(t *testing.T) {
	tests := []struct {
		argv []string
		want []string
	}{
		{[]string{"node", "a.mjs"}, []string{"node", "a.mjs", "SERVER"}},
		{[]string{"sh", "-c", "run {server} now"}, []string{"sh", "-c", "run SERVER now"}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, Command{Argv: tt.argv}.argv("SERVER")); d != "" {
			t.Errorf("%v (-want +got):\n%s", tt.argv, d)
		}
	}
}
