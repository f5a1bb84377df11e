package results

import "fmt"

// CaseSchema is what the schema check found in one case's chronology.
type CaseSchema struct {
	// Checked and Unchecked count the inbound frames validated, and those
	// that could not be (cut short by a chronology bound, or not JSON).
	Checked, Unchecked int
	// Violations lists every problem, in chronology order.
	Violations []SchemaViolation
}

// SchemaViolation is one inbound message that breaks the official schema
// of the run's revision.
type SchemaViolation struct {
	// Seq is the message's sequence number in its chronology.
	Seq uint64 `json:"seq"`
	// Revision is the protocol revision whose schema was applied.
	Revision string `json:"revision"`
	// Definition is the schema definition the message had to match, e.g.
	// "InitializeResult" ("ext-tasks:…" for the tasks extension's).
	Definition string `json:"definition"`
	// Pointer is the JSON pointer (RFC 6901) of the offending value in
	// the message, e.g. "/result/serverInfo/name"; "" is the whole message.
	Pointer string `json:"instance"`
	// Keyword is the schema keyword that failed: type, required, const,
	// anyOf, ...
	Keyword string `json:"keyword"`
	// KeywordLocation is where that keyword is in the schema file, e.g.
	// "schema.json#/$defs/Implementation/properties/name/type".
	KeywordLocation string `json:"keywordLocation"`
	// Message says what the schema wants, e.g. "a number where the
	// schema wants a string".
	Message string `json:"message"`
	// Requirement is the requirement ID the violation breaks.
	Requirement string `json:"requirement"`
}

// String is one line saying what the violation is: "InitializeResult at
// /result/serverInfo/name: a number where the schema wants a string
// (2025-11-25/schema.json#/$defs/Implementation/properties/name/type)".
func (v SchemaViolation) String() string {
	at := v.Pointer
	if at == "" {
		at = "the top level"
	}
	return fmt.Sprintf("%s at %s: %s (%s)", v.Definition, at, v.Message, v.KeywordLocation)
}

// SchemaFinding is one distinct schema violation of a run: the same
// definition, instance pointer and keyword, however many frames and
// cases broke it.
type SchemaFinding struct {
	// SchemaViolation is its first occurrence; its Seq is in FirstCase's
	// chronology.
	SchemaViolation
	// FirstCase is the ID of the first case (in the order run) whose
	// chronology holds it.
	FirstCase string
	// Count is how many frames broke it, Cases in how many cases.
	Count, Cases int
	// Revision is the revision whose run found it; set when the report
	// covers several revisions.
	Revision string
}

// ID names the finding in a baseline and in JUnit:
// "schema/DEFINITION/POINTER#KEYWORD", e.g.
// "schema/InitializeResult/result/serverInfo/name#type".
func (f SchemaFinding) ID() string {
	return "schema/" + f.Definition + f.Pointer + "#" + f.Keyword
}

// SchemaReport is the run's schema check.
type SchemaReport struct {
	// Revision is the revision whose schema was applied.
	Revision string
	// Checked and Unchecked sum the cases' counts.
	Checked, Unchecked int
	// Findings lists each distinct violation once, in the order first
	// seen. A run with any is non-conformant.
	Findings []SchemaFinding
	// Err is set when the schema could not be loaded (a defect of
	// mcpflight, not of the target); nothing was checked.
	Err string
}
