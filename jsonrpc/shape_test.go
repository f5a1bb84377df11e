package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shapeCases are frames whose top-level members take each of readShape's
// paths: plain, spaced, nested, duplicated, escaped or cased names,
// every kind of value, and JSON that is not valid.
var shapeCases = []string{
	`{}`, ` { } `, `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	"{ \"jsonrpc\" :\t\"2.0\" ,\r\n\"id\" : -1.5e+3 , \"method\":\"a\\\"b\", \"params\" : { \"x\" : [1, {\"}\":\"]\"}, \"\\\\\"] } }",
	`{"jsonrpc":"2.0","id":1,"id":"two","method":"ping","method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":null,"result":null,"error":true,"params":false}`,
	`{"JSONRPC":"2.0","Id":1,"METHOD":"ping"}`, `{"jsonrpc":"2.0","\u0069d":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","ſd":1}`, `{"jsonrpc":"2.0","\u212aey":1,"other":{"id":2},"idx":3,"i":4}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping",}`, `{"jsonrpc":"2.0","id":01}`, `{"jsonrpc":"2.0" "id":1}`,
	`{"a":"` + "\x01" + `"}`, `{"a":[1,2]]}`, `{"a":tru}`, `{"a":1}x`, `{"a":"\x"}`,
	`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"result":` + strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat(`}`, 300) + `,"id":"é日本"}`,
}

// TestReadShape: readShape reads what json.Unmarshal reads, and fails
// where it fails.
func TestReadShape(t *testing.T) {
	for _, c := range shapeCases {
		checkShape(t, []byte(c))
	}
}

// FuzzReadShape: the same for any document that starts as an object.
func FuzzReadShape(f *testing.F) {
	for _, c := range shapeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkShape(t, b) })
}

func checkShape(t *testing.T, b []byte) {
	t.Helper()
	doc := bytes.TrimSpace(b)
	if len(doc) == 0 || doc[0] != '{' {
		return
	}
	var want wireShape
	werr := json.Unmarshal(doc, &want)
	got, ok := readShape(doc)
	if ok != (werr == nil) {
		t.Fatalf("%q: readShape ok=%v, json.Unmarshal %v", b, ok, werr)
	}
	if diff := cmp.Diff(want, got); ok && diff != "" {
		t.Fatalf("%q: readShape differs from json.Unmarshal (-want +got):\n%s", b, diff)
	}
}
