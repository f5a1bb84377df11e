package cli

import (
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/profile"
	"github.com/mcpflight/mcpflight/results"
)

// TestProfileHint: a run without a profile against a server that calls
// itself by the name a built-in profile was written for ends with a hint
// naming that profile; with a profile, against another server, or with
// no serverInfo, or a name that only looks like it, there is none.
func TestProfileHint(t *testing.T) {
	everything := &results.Report{Server: &results.Implementation{Name: "mcp-servers/everything"}}
	hint := profileHint(nil, everything)
	if !strings.Contains(hint, `the server calls itself "mcp-servers/everything"`) || !strings.Contains(hint, "--profile server-everything") {
		t.Errorf("hint %q: want the server's name and --profile server-everything", hint)
	}
	prof, err := profile.Builtin(profile.ServerEverything)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		prof *profile.Profile
		rep  *results.Report
	}{
		"with a profile":    {prof, everything},
		"another server":    {nil, &results.Report{Server: &results.Implementation{Name: "mine"}}},
		"no serverInfo":     {nil, &results.Report{}},
		"escaped lookalike": {nil, &results.Report{Server: &results.Implementation{Name: "mcp-servers/everything\x1b[2J"}}},
	} {
		if got := profileHint(tc.prof, tc.rep); got != "" {
			t.Errorf("%s: hint %q, want none", name, got)
		}
	}
}
