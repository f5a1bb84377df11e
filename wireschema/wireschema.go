// Package wireschema checks JSON-RPC messages against the official MCP
// schemas: schema.json of 2025-11-25, schema.json of 2026-07-28, and the
// tasks extension's schema (io.modelcontextprotocol/tasks) that goes with
// 2026-07-28. The schemas are copies of ../shared/spec, embedded at build
// time, and compiled once per revision on first use with
// github.com/santhosh-tekuri/jsonschema/v6, a complete JSON Schema 2020-12
// implementation (every schema declares
// "$schema": "https://json-schema.org/draft/2020-12/schema").
//
// Which definition a message must match is decided by Resolve (a request
// or notification by its method, a response by the method of the request
// it answers); Check walks a whole chronology and keeps the requests it
// saw, so that each response is checked against the result of its request.
// A violation names the definition, the JSON pointer into the message, the
// schema keyword and its location, and the requirement it breaks, in text
// that quotes the schema, never the message's values: what the target sent
// is untrusted.
package wireschema

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Revisions whose schemas are embedded.
const (
	Rev20251125 = "2025-11-25"
	Rev20260728 = "2026-07-28"
)

// The embedded schemas, copies of ../shared/spec (schemas_test.go checks
// that they are the same).
var (
	//go:embed schemas/2025-11-25/schema.json
	schema20251125 []byte
	//go:embed schemas/2026-07-28/schema.json
	schema20260728 []byte
	//go:embed schemas/2026-07-28/ext-tasks/schema_draft_schema.json
	schemaTasksExt []byte
)

// The URLs the schemas are compiled under. The core schemas carry no $id,
// so they get one here; the tasks extension's is its own $id.
const (
	url20251125 = "https://modelcontextprotocol.io/schema/2025-11-25/schema.json"
	url20260728 = "https://modelcontextprotocol.io/schema/2026-07-28/schema.json"
	urlTasksExt = "https://modelcontextprotocol.io/ext-tasks/schema.json"
)

// ErrUnknownRevision is returned by Load for a revision with no schema.
var ErrUnknownRevision = errors.New("wireschema: no schema for this protocol revision")

// Schema is one revision's compiled schemas. It is safe for concurrent
// use: the compiled definitions are only read after Load.
type Schema struct {
	// Revision is the protocol revision, e.g. "2025-11-25".
	Revision string
	defs     map[string]*jsonschema.Schema // core definitions, by name
	ext      map[string]*jsonschema.Schema // tasks extension's definitions, by name
}

// Def reports whether the revision's core schema has definition name.
func (s *Schema) Def(name string) bool { _, ok := s.defs[name]; return ok }

// ExtDef reports whether the revision's tasks extension schema has
// definition name.
func (s *Schema) ExtDef(name string) bool { _, ok := s.ext[name]; return ok }

var loaders = map[string]func() (*Schema, error){
	Rev20251125: sync.OnceValues(func() (*Schema, error) { return compile(Rev20251125, url20251125, schema20251125, "", nil) }),
	Rev20260728: sync.OnceValues(func() (*Schema, error) {
		return compile(Rev20260728, url20260728, schema20260728, urlTasksExt, schemaTasksExt)
	}),
}

// Load returns the compiled schemas of revision, compiling them on the
// first call, so that a run that checks no schema of a revision never
// pays for compiling it; later calls return the same *Schema.
func Load(revision string) (*Schema, error) {
	load, ok := loaders[revision]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownRevision, revision)
	}
	return load()
}

// compile compiles every definition of the core schema at coreURL and,
// when extURL is set, of the extension schema.
func compile(revision, coreURL string, core []byte, extURL string, ext []byte) (*Schema, error) {
	c := jsonschema.NewCompiler()
	names := map[string][]string{}
	for _, res := range []struct {
		url string
		doc []byte
	}{{coreURL, core}, {extURL, ext}} {
		if res.url == "" {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(res.doc))
		if err != nil {
			return nil, fmt.Errorf("wireschema: reading %s: %w", res.url, err)
		}
		if err := c.AddResource(res.url, doc); err != nil {
			return nil, fmt.Errorf("wireschema: adding %s: %w", res.url, err)
		}
		obj, _ := doc.(map[string]any)
		defs, _ := obj["$defs"].(map[string]any)
		for name := range defs {
			names[res.url] = append(names[res.url], name)
		}
	}
	s := &Schema{Revision: revision, defs: map[string]*jsonschema.Schema{}, ext: map[string]*jsonschema.Schema{}}
	for url, list := range names {
		into := s.defs
		if url == extURL {
			into = s.ext
		}
		for _, name := range list {
			sch, err := c.Compile(url + "#/$defs/" + name)
			if err != nil {
				return nil, fmt.Errorf("wireschema: compiling %s of %s: %w", name, url, err)
			}
			into[name] = sch
		}
	}
	return s, nil
}

// Def names one definition: of the core schema, or (Ext) of the tasks
// extension's.
type Def struct {
	Name string
	Ext  bool
}

// String is the definition's name, "ext-tasks:Name" for the extension's.
func (d Def) String() string {
	if d.Ext {
		return "ext-tasks:" + d.Name
	}
	return d.Name
}

func (s *Schema) lookup(d Def) *jsonschema.Schema {
	if d.Ext {
		return s.ext[d.Name]
	}
	return s.defs[d.Name]
}

// ErrUnknownDef is returned by Validate for a definition the revision's
// schemas do not have.
var ErrUnknownDef = errors.New("wireschema: no such definition")

// Validate checks instance, a value decoded by DecodeInstance, against
// definition d. It returns one Problem per distinct violation (instance
// pointer and keyword), with pointers relative to instance and prefixed
// with at (e.g. "/result"); none when the instance is valid.
func (s *Schema) Validate(d Def, instance any, at string) ([]Problem, error) {
	sch := s.lookup(d)
	if sch == nil {
		return nil, fmt.Errorf("%w: %s in the %s schema", ErrUnknownDef, d, s.Revision)
	}
	err := sch.Validate(instance)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Pointer: at, Keyword: "(invalid instance)", Message: "the value cannot be validated"}}, nil
	}
	return problems(ve, at), nil
}
