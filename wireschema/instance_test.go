package wireschema

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// instanceCases take each of DecodeInstance's paths: every kind of
// value, nesting, repeated names, escapes (surrogates, lone ones), space
// around the document, and what is not a valid document.
var instanceCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-1.5e+300`, `123456789012345678901234567890`, `"s"`,
	` {"jsonrpc":"2.0","id":1,"result":{}} ` + "\n",
	`{"a":[1,"x",{"b":null},[],{}],"c":true,"a":false,"d":-0.0E-5}`,
	`{"\u0061":"\ud83d\ude00 \ud800 \u00e9 \" \\ \/ \b\f\n\r\t","é日本":"😀"}`,
	`{"a":1,}`, `{"a":01}`, `{"a":1}x`, `{"a":"` + "\x01" + `"}`, "{\"a\":\"\xff\"}", `{"a":1} {"b":2}`,
	"{\"a\":1}\u00a0", `[` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `]`,
	strings.Repeat(`{"a":`, 500) + `1` + strings.Repeat(`}`, 500), ``, ` `,
}

// TestDecodeInstance: DecodeInstance gives what jsonschema.UnmarshalJSON
// gives, and fails where it fails.
func TestDecodeInstance(t *testing.T) {
	for _, c := range instanceCases {
		checkInstance(t, []byte(c))
	}
}

// FuzzDecodeInstance: the same for any bytes.
func FuzzDecodeInstance(f *testing.F) {
	for _, c := range instanceCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkInstance(t, b) })
}

func checkInstance(t *testing.T, b []byte) {
	t.Helper()
	want, werr := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	got, err := DecodeInstance(b)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: DecodeInstance's error %v, jsonschema.UnmarshalJSON's %v", b, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: DecodeInstance gives %#v, jsonschema.UnmarshalJSON %#v", b, got, want)
	}
}
