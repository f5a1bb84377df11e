package cli

import (
	"flag"

	"github.com/mcpflight/mcpflight/negotiate"
)

// protocolUsage documents --protocol in the usage of call, tools and
// shell, checkProtocolUsage in check's (where it may be both).
const (
	protocolUsage = `  --protocol REV       the protocol revision: 2025-11-25 (initialize),
                       2026-07-28 (server/discover, the envelope on every
                       request), or auto (default: probe with server/discover
                       and fall back to initialize for a 2025-11-25 server)
`
	checkProtocolUsage = `  --protocol REV       the protocol revision: 2025-11-25 (initialize),
                       2026-07-28 (server/discover, the envelope on every
                       request), auto (default: probe with server/discover
                       and fall back to initialize for a 2025-11-25 server),
                       or both (the catalogue once per revision the server
                       offers, in one report with a revision column and what
                       changed between them). The report says which revision
                       was used and why; a server that names only revisions
                       the mode excludes ends the run with one line (exit 2)
`
)

// protocolFlag is --protocol, declared once for the four commands that
// open sessions.
type protocolFlag struct{ value string }

func (p *protocolFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&p.value, "protocol", string(negotiate.ModeAuto), "")
}

// mode parses the flag; both is refused where one session is all there
// is (call, shell).
func (p protocolFlag) mode(usage string, allowBoth bool) (negotiate.Mode, error) {
	m, err := negotiate.ParseMode(p.value)
	if err != nil {
		return "", usagef(usage, "--protocol: %v", err)
	}
	if m == negotiate.ModeBoth && !allowBoth {
		return "", usagef(usage, "--protocol both runs once per revision; one session speaks one: pass 2025-11-25, 2026-07-28 or auto")
	}
	return m, nil
}
