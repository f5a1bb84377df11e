package wireschema

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/mcpflight/mcpflight/chrono"
)

// Problem is one way an instance breaks a definition: where, and which
// schema keyword. Its strings are safe to print: Pointer is sanitised
// (object keys come from the target), Keyword, KeywordLocation and
// Message quote only the schema and the JSON type of the value.
type Problem struct {
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
}

// maxPointer bounds a pointer's length (keys come from the target).
const maxPointer = 512

// problems flattens a validation error into its leaves, one Problem per
// distinct pointer and keyword, ordered by pointer and keyword (the
// validator's own order follows Go's map iteration, which varies).
func problems(ve *jsonschema.ValidationError, at string) []Problem {
	var leaves []*jsonschema.ValidationError
	collect(ve, &leaves)
	var out []Problem
	seen := map[[2]string]bool{}
	for _, l := range leaves {
		p := problem(l, at)
		key := [2]string{p.Pointer, p.Keyword}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.Pointer, b.Pointer), strings.Compare(a.Keyword, b.Keyword))
	})
	return out
}

// collect appends the leaf errors of e. Of an anyOf or oneOf, it follows
// the one alternative the value was evidently meant to be, when the
// others fail on a discriminating constant (a "type" or "method" member)
// or on the value's own JSON type; otherwise the anyOf itself is the leaf.
func collect(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	switch k := e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if o, ok := k.(*kind.OneOf); ok && len(o.Subschemas) > 0 {
			*out = append(*out, e) // more than one matched
			return
		}
		var alive []*jsonschema.ValidationError
		for _, branch := range e.Causes {
			if !ruledOut(branch, len(e.InstanceLocation)) {
				alive = append(alive, branch)
			}
		}
		if len(alive) == 1 {
			collect(alive[0], out)
			return
		}
		*out = append(*out, e)
		return
	}
	if len(e.Causes) == 0 {
		*out = append(*out, e)
		return
	}
	for _, c := range e.Causes {
		collect(c, out)
	}
}

// ruledOut reports whether an alternative failed on the value's JSON type
// (at depth, the anyOf's own location) or on a constant or enum of one of
// its members (depth+1): it was not the alternative meant.
func ruledOut(branch *jsonschema.ValidationError, depth int) bool {
	var leaves []*jsonschema.ValidationError
	flatten(branch, &leaves)
	for _, l := range leaves {
		switch l.ErrorKind.(type) {
		case *kind.Type:
			if len(l.InstanceLocation) == depth {
				return true
			}
		case *kind.Const, *kind.Enum:
			if len(l.InstanceLocation) == depth+1 {
				return true
			}
		}
	}
	return false
}

// flatten appends every leaf of e, without choosing among alternatives.
func flatten(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	if len(e.Causes) == 0 {
		*out = append(*out, e)
		return
	}
	for _, c := range e.Causes {
		flatten(c, out)
	}
}

func problem(e *jsonschema.ValidationError, at string) Problem {
	path := e.ErrorKind.KeywordPath()
	keyword := ""
	if len(path) > 0 {
		keyword = path[0]
	}
	return Problem{
		Pointer:         chrono.Sanitize(chrono.Clip(at+pointer(e.InstanceLocation), maxPointer), false),
		Keyword:         keyword,
		KeywordLocation: keywordLocation(e.SchemaURL, path),
		Message:         chrono.Sanitize(chrono.Clip(describe(e), chrono.MaxText), false),
	}
}

// pointer is the RFC 6901 pointer of tokens.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// keywordLocation is the keyword's place in its schema file, with the
// file named as in the spec folder instead of by its compilation URL.
func keywordLocation(schemaURL string, path []string) string {
	loc := schemaURL + pointer(path)
	for _, u := range []struct{ url, name string }{
		{url20251125, "2025-11-25/schema.json"},
		{url20260728, "2026-07-28/schema.json"},
		{urlTasksExt, "ext-tasks/schema.json"},
	} {
		if rest, ok := strings.CutPrefix(loc, u.url); ok {
			return u.name + rest
		}
	}
	return loc
}

// describe says what the schema wants, quoting the schema and the value's
// JSON type, never the value.
func describe(e *jsonschema.ValidationError) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		return fmt.Sprintf("%s where the schema wants %s", article(k.Got), orList(k.Want))
	case *kind.Required:
		return "missing required " + plural("member", len(k.Missing)) + " " + quoted(k.Missing)
	case *kind.Const:
		return "the value must be " + schemaValue(k.Want)
	case *kind.Enum:
		vals := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			vals = append(vals, schemaValue(w))
		}
		return "the value must be one of " + strings.Join(vals, ", ")
	case *kind.AdditionalProperties:
		// The member names come from the target.
		return "members the schema does not allow: " + quoted(k.Properties)
	case *kind.AnyOf, *kind.OneOf:
		if types := typesWanted(e); types != nil {
			return fmt.Sprintf("%s where the schema wants %s", article(gotType(e)), orList(types))
		}
		return fmt.Sprintf("the value matches none of the %d alternatives the schema allows", len(e.Causes))
	case *kind.FalseSchema:
		return "the schema allows no value here"
	case *kind.MinItems:
		return fmt.Sprintf("fewer than %d items", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("more than %d items", k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("shorter than %d characters", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("longer than %d characters", k.Want)
	case *kind.Minimum:
		return "less than " + k.Want.FloatString(0)
	case *kind.Maximum:
		return "greater than " + k.Want.FloatString(0)
	case *kind.Pattern:
		return "the string does not match the pattern " + schemaValue(k.Want)
	case *kind.Format:
		return "the string is not a valid " + k.Want
	}
	if path := e.ErrorKind.KeywordPath(); len(path) > 0 {
		return "fails the schema's " + path[0]
	}
	return "fails the schema"
}

// typesWanted returns the union of the types an anyOf's alternatives
// want, when every alternative failed only on the value's JSON type; nil
// otherwise.
func typesWanted(e *jsonschema.ValidationError) []string {
	var want []string
	for _, branch := range e.Causes {
		var leaves []*jsonschema.ValidationError
		flatten(branch, &leaves)
		if len(leaves) != 1 {
			return nil
		}
		t, ok := leaves[0].ErrorKind.(*kind.Type)
		if !ok || len(leaves[0].InstanceLocation) != len(e.InstanceLocation) {
			return nil
		}
		for _, w := range t.Want {
			if !slices.Contains(want, w) {
				want = append(want, w)
			}
		}
	}
	return want
}

// gotType is the JSON type an anyOf's alternatives reported.
func gotType(e *jsonschema.ValidationError) string {
	var leaves []*jsonschema.ValidationError
	flatten(e, &leaves)
	for _, l := range leaves {
		if t, ok := l.ErrorKind.(*kind.Type); ok {
			return t.Got
		}
	}
	return "value"
}

func article(jsonType string) string {
	switch jsonType {
	case "object", "array", "integer":
		return "an " + jsonType
	case "null":
		return "null"
	}
	return "a " + jsonType
}

func orList(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		words[i] = article(t)
	}
	return strings.Join(words, " or ")
}

func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", chrono.Clip(n, 128))
	}
	return strings.Join(q, ", ")
}

func plural(noun string, n int) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// schemaValue shows a constant from the schema.
func schemaValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case nil:
		return "null"
	case map[string]any, []any:
		return "the schema's constant"
	}
	return fmt.Sprint(v)
}
