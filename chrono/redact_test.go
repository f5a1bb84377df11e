package chrono

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
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

// TestJSONLIsTerminalSafe: a chronology written as JSON Lines holds no
// raw control or bidi character, yet reads back exactly.
func TestJSONLIsTerminalSafe(t *testing.T) {
	hostile := "esc\x1b[2J c1\u009b31m bidi\u202e\u061c bel\x07 nul\x00 <script>"
	l := New()
	l.Harness(KindError, "runner", hostile)
	l.Append(Event{Dir: In, Channel: "stderr", Kind: KindStderr, Raw: []byte(hostile)})
	raw := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + "\u009b\u202e" + `"}}`)
	l.Frame(In, "stdout", raw, nil, nil)
	var buf bytes.Buffer
	if err := l.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\u009b", "\u202e", "\u061c", "\x07", "\x00"} {
		if strings.Contains(buf.String(), bad) {
			t.Errorf("%q reached the JSON Lines:\n%s", bad, buf.String())
		}
	}
	events, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if events[0].Text != hostile || string(events[1].Raw) != hostile || !bytes.Equal(events[2].Raw, raw) {
		t.Errorf("not read back exactly: %q %q %q", events[0].Text, events[1].Raw, events[2].Raw)
	}
	if got := SafeJSON([]byte(`"a` + "\u0085é\u2066" + `"`)); string(got) != `"a\u0085é\u2066"` {
		t.Errorf("SafeJSON = %s", got)
	}
}

func TestTextFieldsBounded(t *testing.T) {
	l := New()
	huge := strings.Repeat("é", 1<<20)
	e := l.Harness(KindError, "runner", huge)
	f := l.Frame(In, "stdout", []byte(`{"jsonrpc":"2.0","method":"`+strings.Repeat("m", 1<<20)+`"}`), nil, nil)
	if len(e.Text) > MaxText+40 || !strings.HasSuffix(e.Text, "(truncated, 2097152 bytes)") || !utf8.ValidString(e.Text) {
		t.Errorf("text of %d bytes, ends %q", len(e.Text), e.Text[max(0, len(e.Text)-40):])
	}
	if len(f.Summary.Method) > MaxText+40 || !f.Truncated {
		t.Errorf("method of %d bytes, truncated %v", len(f.Summary.Method), f.Truncated)
	}
	var buf bytes.Buffer
	if err := l.WriteJSONL(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSONL(&buf); err != nil {
		t.Errorf("a bounded chronology does not read back: %v", err)
	}
}

// TestRedactWriterAnySplit: however a stream is cut into writes, the
// writer's output is the one-shot redaction of the whole.
func TestRedactWriterAnySplit(t *testing.T) {
	r := NewRedactor()
	r.Add("abcabd-secret", "secret-two<&>", "xxxxxxxy")
	in := "abcabcabd-secret … secret-two<&> secret-two&lt;&amp;&gt; xxxxxxxxxxxy abcab secret-tw xxxxxxx"
	want := r.String(in)
	if strings.Contains(want, "secret-two") || strings.Contains(want, "abd-secret") || strings.Contains(want, "xxxxxxxy") {
		t.Fatalf("one-shot redaction missed a secret: %q", want)
	}
	seed := uint32(1)
	next := func(n int) int {
		seed = seed*1664525 + 1013904223
		return int(seed>>16) % n
	}
	for trial := range 500 {
		var out bytes.Buffer
		w := r.Writer(&out)
		for rest := in; rest != ""; {
			n := 1 + next(min(len(rest), 12))
			if _, err := w.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("trial %d: got %q\nwant %q", trial, out.String(), want)
		}
	}
}

// TestLogRedactsEscapedSecret: a secret the peer writes with JSON
// escapes, which no byte pattern matches, is redacted in the decoded
// frame.
func TestLogRedactsEscapedSecret(t *testing.T) {
	r := NewRedactor()
	r.Add("tok-0123456789")
	l := New(WithRedactor(r))
	raw := `{"jsonrpc":"2.0","id":1,"result":{"echo":"\u0074ok-01234\u0035\u0036789","n":1.50,"tok-0123456789":"\/"}}`
	e := l.Frame(In, "stdout", []byte(raw), nil, nil)
	m, err := e.Message()
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	if res["echo"] != Redacted || res[Redacted] != "/" || !strings.Contains(string(e.Raw), `"n":1.50`) {
		t.Errorf("raw %s", e.Raw)
	}
	plain := []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"a \"quoted\" word"}}`)
	if got := l.Frame(In, "stdout", plain, nil, nil).Raw; !bytes.Equal(got, plain) {
		t.Errorf("a frame without a secret was rewritten: %s", got)
	}
}
