package runner

// Client mode (mcpflight check-client, package clientrun): mcpflight plays
// the server and the target is a client. clientrun runs its own cases and
// fills a Report with RoleClient, so that the renderers, baselines and the
// teardown grade work unchanged; these are the parts of Run it shares.

// Roles of Report.Role.
const (
	// RoleServer is the default: the target is a server (check).
	RoleServer = ""
	// RoleClient: the target is a client under test (check-client); in
	// the chronology Out is our server's frames, In the client's.
	RoleClient = "client"
)

// CheckCaseSchema validates res's chronology against the revision's
// schema, as Run does after each case (see checkSchema).
func CheckCaseSchema(version string, res Result) Result { return checkSchema(version, res) }

// SchemaReportOf collects the cases' schema violations into the run's
// findings, as Run does (see schemaReport).
func SchemaReportOf(version string, results []Result) SchemaReport {
	return schemaReport(version, results)
}
