package chrono

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestRedactorEncodings(t *testing.T) {
	secret := `s3cr<e>t&"q'/x`
	r := NewRedactor()
	r.Add(secret, "short") // too short to search for
	var jsonEsc bytes.Buffer
	_ = json.NewEncoder(&jsonEsc).Encode(secret)
	for _, in := range []string{
		"plain " + secret + " end",
		"json " + jsonEsc.String(),
		"html s3cr&lt;e&gt;t&amp;&quot;q&#39;/x",
		"template s3cr&lt;e&gt;t&amp;&#34;q&#39;/x",
	} {
		got := r.String(in)
		if strings.Contains(got, "s3cr") || !strings.Contains(got, Redacted) {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
	if got := r.String("a short word"); got != "a short word" {
		t.Errorf("a value under MinSecretLen was redacted: %q", got)
	}
	var nilR *Redactor
	if got := nilR.String("x " + secret); got != "x "+secret || !nilR.Empty() {
		t.Errorf("a nil Redactor changed %q", got)
	}
}

// TestRedactWriterSplitSecret writes a secret one byte at a time: no
// write may pass on a whole secret, even split.
func TestRedactWriterSplitSecret(t *testing.T) {
	secret := "tok-0123456789"
	r := NewRedactor()
	r.Add(secret)
	var out bytes.Buffer
	w := r.Writer(&out)
	in := "before tok-01 " + secret + " after tok-0123456789X and tok-"
	for i := range len(in) {
		if n, err := w.Write([]byte{in[i]}); n != 1 || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "before tok-01 " + Redacted + " after " + Redacted + "X and tok-"
	if out.String() != want {
		t.Errorf("got  %q\nwant %q", out.String(), want)
	}
}

func TestLogRedactsEveryField(t *testing.T) {
	secret := "Bearer-abcdef123456"
	r := NewRedactor()
	r.Add(secret)
	l := New(WithRedactor(r), WithMaxRaw(40))
	l.Frame(In, "stdout", []byte(`{"jsonrpc":"2.0","id":"`+secret+`","result":{"echo":"`+secret+`"}}`), nil, nil)
	l.Harness(KindError, "POST "+secret, "server said "+secret)
	l.State("s", secret, secret)
	// A secret straddling the raw cut is still found whole.
	l.Append(Event{Dir: In, Kind: KindStderr, Raw: []byte(strings.Repeat("x", 35) + secret + strings.Repeat("y", 20))})
	var buf bytes.Buffer
	if err := l.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "abcdef") {
		t.Errorf("the secret reached the chronology:\n%s", buf.String())
	}
	if n := strings.Count(buf.String(), Redacted); n < 6 {
		t.Errorf("%d redactions, want at least 6:\n%s", n, buf.String())
	}
	ev := l.Events()[3]
	if !ev.Truncated || ev.Size != 55+len(secret) {
		t.Errorf("straddling event: truncated=%v size=%d", ev.Truncated, ev.Size)
	}
}
