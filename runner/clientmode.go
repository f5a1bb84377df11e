package runner

import "github.com/mcpflight/mcpflight/results"

// Client mode (mcpflight check-client, package clientrun): mcpflight plays
// the server and the target is a client. clientrun runs its own cases and
// fills a Report with RoleClient, so that the renderers, baselines and the
// teardown grade work unchanged; these are the parts of Run it shares.

// CheckCaseSchema validates res's chronology against the revision's
// schema, as Run does after each case (see checkSchema).
func CheckCaseSchema(version string, res results.Result) results.Result {
	return checkSchema(version, res)
}

// SchemaReportOf collects the cases' schema violations into the run's
// findings, as Run does (see schemaReport).
func SchemaReportOf(version string, rs []results.Result) results.SchemaReport {
	return schemaReport(version, rs)
}
