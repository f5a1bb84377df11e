// Package cases is the catalogue: each case is a row of data (a stable ID,
// the requirement IDs it checks, the versions it applies to, what it needs
// from the target) plus a Run function that drives a peer session through
// the probe kit and judges the chronology. There is one file per spec
// section; cases never format output.
package cases

import "github.com/mcpflight/mcpflight/probe"

// All returns the whole catalogue in a stable order.
func All() []probe.Case {
	var all []probe.Case
	all = append(all, lifecycleCases()...)
	all = append(all, jsonrpcCases()...)
	all = append(all, stdioCases()...)
	all = append(all, cancelCases()...)
	all = append(all, progressCases()...)
	all = append(all, loggingCases()...)
	all = append(all, httpCases()...)
	all = append(all, taskCases()...)
	all = append(all, schemaCases()...)
	all = append(all, http2026Cases()...)
	all = append(all, tasks2026Cases()...)
	all = append(all, discoverCases()...)
	all = append(all, cancel2026Cases()...)
	all = append(all, logging2026Cases()...)
	all = append(all, subscriptionCases()...)
	all = append(all, robustCases()...)
	return all
}
