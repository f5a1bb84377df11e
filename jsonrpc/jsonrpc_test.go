package jsonrpc

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseIDKeepsTypes(t *testing.T) {
	tests := []struct {
		raw     string
		want    string
		wantKey string
		wantErr bool
	}{
		{raw: `0`, want: `0`, wantKey: "n:0"},
		{raw: `"5"`, want: `"5"`, wantKey: "s:5"},
		{raw: `5`, want: `5`, wantKey: "n:5"},
		{raw: `-7`, want: `-7`, wantKey: "n:-7"},
		{raw: `""`, want: `""`, wantKey: "s:"},
		{raw: `null`, wantErr: true},
		{raw: `1.5`, wantErr: true},
		{raw: `1e3`, wantErr: true},
		{raw: `true`, wantErr: true},
		{raw: `{}`, wantErr: true},
		{raw: `99999999999999999999`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			id, err := ParseID([]byte(tt.raw))
			if tt.wantErr {
				if err == nil || !errors.Is(err, ErrInvalidScalar) {
					t.Fatalf("ParseID(%s) err = %v, want ErrInvalidScalar", tt.raw, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseID(%s): %v", tt.raw, err)
			}
			if got := id.String(); got != tt.want {
				t.Errorf("String() = %s, want %s", got, tt.want)
			}
			if got := id.Key(); got != tt.wantKey {
				t.Errorf("Key() = %s, want %s", got, tt.wantKey)
			}
			out, _ := json.Marshal(id)
			if string(out) != tt.want {
				t.Errorf("Marshal = %s, want %s", out, tt.want)
			}
		})
	}
}

func TestStringFiveIsNotIntegerFive(t *testing.T) {
	if StringID("5") == IntID(5) || StringID("5").Key() == IntID(5).Key() {
		t.Fatal(`"5" and 5 must be different IDs`)
	}
	if !IntID(0).IsValid() {
		t.Fatal("integer 0 must be a valid ID")
	}
	if (ID{}).IsValid() {
		t.Fatal("zero ID must be absent")
	}
}

func TestDecodeClassifies(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		class DecodeClass
	}{
		{"garbage", `hello`, ClassParse},
		{"truncated", `{"jsonrpc":"2.0"`, ClassParse},
		{"empty", ``, ClassParse},
		{"string", `"x"`, ClassNotObject},
		{"number", `42`, ClassNotObject},
		{"batch", `[{"jsonrpc":"2.0","method":"ping","id":1}]`, ClassBatch},
		{"no version", `{"method":"ping","id":1}`, ClassWrongVersion},
		{"old version", `{"jsonrpc":"1.0","method":"ping","id":1}`, ClassWrongVersion},
		{"numeric version", `{"jsonrpc":2.0,"method":"ping","id":1}`, ClassWrongVersion},
		{"null id request", `{"jsonrpc":"2.0","method":"ping","id":null}`, ClassInvalidID},
		{"float id", `{"jsonrpc":"2.0","method":"ping","id":1.5}`, ClassInvalidID},
		{"method and result", `{"jsonrpc":"2.0","method":"x","id":1,"result":{}}`, ClassAmbiguous},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`, ClassAmbiguous},
		{"nothing", `{"jsonrpc":"2.0","id":1}`, ClassAmbiguous},
		{"method not string", `{"jsonrpc":"2.0","method":5}`, ClassAmbiguous},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, ClassInvalidID},
		{"result with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, ClassInvalidID},
		{"error not object", `{"jsonrpc":"2.0","id":1,"error":"bad"}`, ClassAmbiguous},
		{"bad utf8", "{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}", ClassInvalidUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.raw))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Decode(%q) err = %v, want *DecodeError", tt.raw, err)
			}
			if de.Class != tt.class {
				t.Errorf("class = %s, want %s (%s)", de.Class, tt.class, de.Detail)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Error("DecodeError must wrap ErrMalformed")
			}
			if string(de.Raw) != tt.raw {
				t.Error("DecodeError must keep the raw frame")
			}
		})
	}
}

func TestDecodeKinds(t *testing.T) {
	tests := []struct {
		raw    string
		kind   Kind
		id     string
		method string
		null   bool
	}{
		{`{"jsonrpc":"2.0","id":0,"method":"ping"}`, KindRequest, `0`, "ping", false},
		{`{"jsonrpc":"2.0","id":"0","method":"ping","params":{}}`, KindRequest, `"0"`, "ping", false},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, KindNotification, `<absent>`, "notifications/cancelled", false},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, KindResult, `7`, "", false},
		{`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}}`, KindError, `"a"`, "", false},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, KindError, `<absent>`, "", true},
	}
	for _, tt := range tests {
		m, err := Decode([]byte(tt.raw))
		if err != nil {
			t.Fatalf("Decode(%s): %v", tt.raw, err)
		}
		got := []any{m.Kind, m.ID.String(), m.Method, m.NullID}
		want := []any{tt.kind, tt.id, tt.method, tt.null}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Decode(%s) (-want +got):\n%s", tt.raw, d)
		}
		if string(m.Raw) != tt.raw {
			t.Errorf("raw not kept")
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, id := range []ID{IntID(0), StringID("0"), IntID(-3), StringID("x\"y")} {
		b, err := EncodeRequest(id, "tools/call", map[string]any{"name": "slow"})
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", b, err)
		}
		if m.ID != id || m.Kind != KindRequest {
			t.Errorf("round trip of %s gave %s %s", id, m.Kind, m.ID)
		}
	}
	if _, err := EncodeRequest(ID{}, "x", nil); err == nil {
		t.Error("EncodeRequest must refuse an absent id")
	}
	b, _ := EncodeError(ID{}, &Error{Code: CodeParseError, Message: "bad"})
	m, err := Decode(b)
	if err != nil || !m.NullID || m.Kind != KindError {
		t.Errorf("null-id error round trip: %s %v", b, err)
	}
	b, _ = EncodeResult(IntID(1), nil)
	if string(b) != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("empty result = %s", b)
	}
}

func TestMalformedFramesAreClassified(t *testing.T) {
	for _, class := range []DecodeClass{ClassParse, ClassNotObject, ClassBatch, ClassWrongVersion, ClassInvalidID, ClassAmbiguous, ClassInvalidUTF8} {
		_, err := Decode(Malformed(class))
		var de *DecodeError
		if !errors.As(err, &de) || de.Class != class {
			t.Errorf("Malformed(%s) decoded as %v", class, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":""}}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkShape(t, b)
		m, err := Decode(b)
		if err == nil && m.Kind == 0 {
			t.Fatalf("decoded without kind: %q", b)
		}
		if err == nil && (m.Kind == KindRequest) && !m.ID.IsValid() {
			t.Fatalf("request without valid id: %q", b)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	frames := [][]byte{
		[]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":3,"total":10,"message":"step 3"}}`),
		[]byte(`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"done"}],"isError":false}}`),
		[]byte(`{"jsonrpc":"2.0","id":"req-9","method":"tools/call","params":{"name":"slow","arguments":{"key":"a"},"_meta":{"progressToken":9}}}`),
	}
	var n int64
	for _, f := range frames {
		n += int64(len(f))
	}
	b.SetBytes(n / int64(len(frames)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := Decode(frames[i%len(frames)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// TestEncodedIsDecoded checks that Encoded gives what Decode reads from
// the frames EncodeRequest and EncodeNotification write, or nothing.
func TestEncodedIsDecoded(t *testing.T) {
	weird := string([]byte{'a', 0xff, 'b'})
	rows := []struct {
		name   string
		id     ID
		method string
		params any
		none   bool
	}{
		{name: "no params", id: IntID(1), method: "ping"},
		{name: "struct params", id: StringID("x"), method: "tools/call", params: map[string]any{"name": "slow", "_meta": map[string]any{"progressToken": 7}}},
		{name: "raw params with spaces", id: IntID(0), method: "m", params: json.RawMessage(` { "a" : [1, 2], "progressToken" : "t" } `)},
		{name: "params look-alike in strings", id: StringID(`","params":`), method: `m","params":{}`, params: map[string]string{"k": `,"params":`}},
		{name: "html escaped", id: IntID(2), method: "<m>", params: map[string]string{"q": "a<b&c"}},
		{name: "null params", id: IntID(3), method: "m", params: json.RawMessage(`null`)},
		{name: "notification", method: "notifications/cancelled", params: map[string]any{"requestId": 5}},
		{name: "notification without params", method: "notifications/initialized"},
		{name: "invalid utf-8 method", id: IntID(4), method: weird, none: true},
		{name: "invalid utf-8 id", id: StringID(weird), method: "m", none: true},
		{name: "empty method", id: IntID(5), method: "", none: true},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var raw []byte
			var err error
			if r.id.IsValid() {
				raw, err = EncodeRequest(r.id, r.method, r.params)
			} else {
				raw, err = EncodeNotification(r.method, r.params)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := Encoded(raw, r.id, r.method)
			if r.none {
				if got != nil {
					t.Fatalf("Encoded(%s) = %+v, want nil", raw, got)
				}
				return
			}
			want, err := Decode(raw)
			if err != nil {
				t.Fatalf("Decode(%s): %v", raw, err)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(ID{}, scalar{})); diff != "" {
				t.Errorf("Encoded(%s) differs from Decode (-decoded +encoded):\n%s", raw, diff)
			}
		})
	}
}

// TestEnvelopeAsMarshalled checks that the encoders write, byte for byte,
// what json.Marshal writes of the envelope, and fail where it fails.
func TestEnvelopeAsMarshalled(t *testing.T) {
	weird := string([]byte{'a', 0xff, '<'})
	ids := []ID{IntID(0), IntID(-7), StringID(""), StringID(`a"<b>&\`), StringID(weird), {}}
	methods := []string{"tools/call", `m"<&>`, weird, "\u2028"}
	values := []any{
		nil,
		json.RawMessage(nil),
		json.RawMessage{},
		json.RawMessage(`null`),
		json.RawMessage(` { "a" : "<x>" , "b" : [ 1 , 2 ] } `),
		json.RawMessage(`{"a":`),
		map[string]any{"name": "slow", "q": "a<b&c\u2028", "n": 1.5},
		map[string]any(nil),
		struct {
			A string          `json:"a"`
			R json.RawMessage `json:"r"`
		}{"<", json.RawMessage(` [ "&" ] `)},
		[]int{1, 2},
	}
	oracle := func(e envelope) ([]byte, error) { return json.Marshal(e) }
	for _, v := range values {
		old, oerr := func() (json.RawMessage, error) {
			if v == nil {
				return nil, nil
			}
			if raw, ok := v.(json.RawMessage); ok {
				return raw, nil
			}
			return json.Marshal(v)
		}()
		if oerr != nil {
			t.Fatal(oerr)
		}
		check := func(what string, got []byte, err error, want []byte, werr error) {
			t.Helper()
			if (err != nil) != (werr != nil) {
				t.Fatalf("%s %v: error %v, json.Marshal's %v", what, v, err, werr)
			}
			if string(got) != string(want) {
				t.Errorf("%s %v:\n got %s\nwant %s", what, v, got, want)
			}
		}
		for _, m := range methods {
			got, err := EncodeNotification(m, v)
			want, werr := oracle(envelope{JSONRPC: Version, Method: m, Params: old})
			check("notification "+m, got, err, want, werr)
			for _, id := range ids {
				if !id.IsValid() {
					continue
				}
				got, err := EncodeRequest(id, m, v)
				want, werr := oracle(envelope{JSONRPC: Version, ID: &id, Method: m, Params: old})
				check("request "+id.String()+" "+m, got, err, want, werr)
			}
		}
		for _, id := range ids {
			r := old
			if r == nil {
				r = json.RawMessage(`{}`)
			}
			got, err := EncodeResult(id, v)
			want, werr := oracle(envelope{JSONRPC: Version, ID: &id, Result: r})
			check("result "+id.String(), got, err, want, werr)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	params := map[string]any{"name": "slow", "arguments": map[string]any{"key": "c1", "steps": 3}, "_meta": map[string]any{"progressToken": "t1"}}
	result := map[string]any{"content": []map[string]string{{"type": "text", "text": "done after 3 steps"}}}
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := EncodeRequest(IntID(10000007), "tools/call", params); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("result", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := EncodeResult(IntID(10000007), result); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestParseKindUndoesString: every kind's name parses back to it, and
// no other text parses.
func TestParseKindUndoesString(t *testing.T) {
	for _, k := range []Kind{KindRequest, KindNotification, KindResult, KindError} {
		if got, ok := ParseKind(k.String()); !ok || got != k {
			t.Errorf("ParseKind(%q) = %v, %v; want %v", k.String(), got, ok, k)
		}
	}
	for _, s := range []string{"", "unknown", "Request", "response"} {
		if k, ok := ParseKind(s); ok {
			t.Errorf("ParseKind(%q) = %v; want not ok", s, k)
		}
	}
}
