package runner

import (
	"encoding/json"
	"fmt"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/mcp"
	"github.com/mcpflight/mcpflight/verdict"
)

// revisionOwner is the case that judges a server's answer to a request
// under a revision it does not serve (LIF-40): server/discover must list
// what it serves, and a request under another revision gets -32022.
const revisionOwner = "discover/answers"

// refusedRevision turns the error of a case into blocked when the
// chronology shows the target answering -32022 (UnsupportedProtocolVersion)
// to a request the case sent under the run's own revision: the case could
// not act, because the server refuses the revision the run uses, which
// discover/answers judges (a server whose server/discover lists the
// revision, or answers it, must serve it). Any other outcome is returned
// as it is.
func refusedRevision(log *chrono.Log, version string, o verdict.Outcome) verdict.Outcome {
	if o.Verdict != verdict.Error || log == nil {
		return o
	}
	under := map[string]bool{} // request ids sent under the run's revision
	for _, ev := range log.Events() {
		if ev.Kind != chrono.KindFrame || ev.Summary == nil {
			continue
		}
		switch {
		case ev.Dir == chrono.Out && ev.Summary.Kind == "request":
			if requestRevision(ev) == version {
				under[ev.Summary.ID] = true
			}
		case ev.Dir == chrono.In && ev.Summary.Kind == "error" && under[ev.Summary.ID]:
			m, err := ev.Message()
			if err != nil || m.Error == nil || m.Error.Code != mcp.CodeUnsupportedProtocolVersion {
				continue
			}
			log.Harness(chrono.KindDecision, "runner", fmt.Sprintf("blocked: request %s under %s was answered -32022 (seq %d): the server refuses the run's revision", ev.Summary.ID, version, ev.Seq))
			return verdict.Blamed(fmt.Sprintf("a request under %s", version), "LIF-40", revisionOwner,
				fmt.Sprintf("request %s was answered -32022 UnsupportedProtocolVersion (seq %d): %s", ev.Summary.ID, ev.Seq, chrono.Sanitize(m.Error.Message, false)))
		}
	}
	return o
}

// requestRevision is the protocol revision a request's _meta envelope
// names, "" when it names none.
func requestRevision(ev chrono.Event) string {
	m, err := ev.Message()
	if err != nil || len(m.Params) == 0 {
		return ""
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return ""
	}
	var v string
	if json.Unmarshal(p.Meta[mcp.MetaProtocolVersion], &v) != nil {
		return ""
	}
	return v
}
