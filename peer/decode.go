package peer

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ErrUndecodable is wrapped by the error of a result or params that do
// not have the shape the schema gives them (a number where a string
// belongs), so that the session cannot read them.
var ErrUndecodable = errors.New("does not have the shape the schema gives it")

// decodeError wraps err, from decoding what ("the initialize result"),
// in terms of the message rather than of Go's types: "at serverInfo.name,
// a number where a string belongs".
func decodeError(what string, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		at := te.Field
		if at == "" {
			at = "the top level"
		}
		got, _, _ := strings.Cut(te.Value, " ")
		return fmt.Errorf("peer: %s %w: at %s, %s where %s belongs", what, ErrUndecodable, at, jsonArticle(got), jsonTypeOf(te.Type))
	case errors.As(err, &se):
		return fmt.Errorf("peer: %s %w: it is not valid JSON (at byte %d)", what, ErrUndecodable, se.Offset)
	}
	return fmt.Errorf("peer: %s %w", what, ErrUndecodable)
}

// jsonTypeOf names the JSON value a Go type decodes from.
func jsonTypeOf(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonTypeOf(t.Elem())
	}
	return "another value"
}

// jsonArticle is a JSON type named by encoding/json ("number", "object",
// "bool") with its article.
func jsonArticle(v string) string {
	switch v {
	case "object", "array":
		return "an " + v
	case "bool":
		return "a boolean"
	case "":
		return "a value"
	}
	return "a " + v
}
