package runner

import (
	"github.com/mcpflight/mcpflight/negotiate"
	"github.com/mcpflight/mcpflight/peer"
	"github.com/mcpflight/mcpflight/results"
	"github.com/mcpflight/mcpflight/transport"
)

// The runner fills the results model (package results) from what its
// transports, peers, negotiation and schema check hold; these turn each
// into its plain record.

// TeardownOf is the record of how a connection ended.
func TeardownOf(td transport.Teardown) results.Teardown {
	out := results.Teardown{ExitedAfter: results.Step(td.ExitedAfter), Waited: td.Waited, ExitCode: td.ExitCode,
		Signal: td.Signal, Leftovers: td.Leftovers}
	if td.Err != nil {
		out.Err = td.Err.Error()
	}
	return out
}

// implementationOf is the record of a handshake's serverInfo or
// clientInfo; nil for nil.
func implementationOf(i *peer.Implementation) *results.Implementation {
	if i == nil {
		return nil
	}
	return &results.Implementation{Name: i.Name, Title: i.Title, Version: i.Version}
}

// negotiationOf is the record of a negotiation; nil for nil.
func negotiationOf(sv *negotiate.Survey) *results.Negotiation {
	if sv == nil {
		return nil
	}
	out := &results.Negotiation{Mode: string(sv.Mode), Revisions: append([]string(nil), sv.Revisions...),
		Reasons: map[string]string{}, Discover: probeOf(sv.Probe2026), Initialize: probeOf(sv.Probe2025),
		Server: implementationOf(sv.ServerInfo())}
	for k, v := range sv.Reasons {
		out.Reasons[k] = v
	}
	for _, inc := range sv.Inconsistencies {
		out.Inconsistencies = append(out.Inconsistencies,
			results.Inconsistency{Summary: inc.Summary, Requirements: append([]string(nil), inc.Requirements...)})
	}
	return out
}

// probeOf is the record of one negotiation probe; nil for nil.
func probeOf(p *negotiate.Probe) *results.Probe {
	if p == nil {
		return nil
	}
	out := &results.Probe{OK: p.OK(), Failure: p.Failure}
	switch {
	case p.Discover != nil:
		out.SupportedVersions = append([]string(nil), p.Discover.SupportedVersions...)
		out.Server = implementationOf(p.Discover.ServerInfo)
	case p.Init != nil:
		out.ProtocolVersion = p.Init.ProtocolVersion
		out.Server = implementationOf(&p.Init.ServerInfo)
	}
	return out
}
