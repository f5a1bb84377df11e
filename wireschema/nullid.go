package wireschema

// nullIDAsAbsent returns an error response whose id is null as the schema
// can judge it: without the id. JSON-RPC 2.0, which RPC-2 makes binding,
// says the id of an error "MUST be Null" when it could not be read (a
// parse error, an invalid request); the MCP schema's RequestId excludes
// null and covers the same case with an optional id (RPC-11's "except in
// error cases where the ID could not be read"). Both shapes are the one
// answer, so a null id is not a violation; any other id is validated as
// it is.
func nullIDAsAbsent(msg map[string]any) any {
	id, present := msg["id"]
	if !present || id != nil {
		return msg
	}
	out := make(map[string]any, len(msg))
	for k, v := range msg {
		if k != "id" {
			out[k] = v
		}
	}
	return out
}
