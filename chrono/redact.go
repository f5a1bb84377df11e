package chrono

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"html"
	"html/template"
	"io"
	"sort"
	"strings"
	"sync"
)

// Redacted replaces a secret wherever a Redactor finds one.
const Redacted = "[redacted]"

// MinSecretLen is the shortest secret a Redactor searches for. A shorter
// value ("1", "yes") would blank out unrelated text all over a report,
// and is no real secret anyway; header values of any length are still
// redacted where they are shown as headers.
const MinSecretLen = 6

// Redactor replaces registered secret strings (credentials the user
// passed on the command line) with Redacted, in each of the encodings a
// report may give them: as they are, JSON-escaped, HTML- and
// XML-escaped, and as Sanitize shows them. A nil or empty Redactor
// changes nothing. It is safe for concurrent use.
type Redactor struct {
	mu       sync.RWMutex
	secrets  map[string]bool
	patterns []string // every encoding of every secret, longest first
	repl     *strings.Replacer
}

// NewRedactor returns a Redactor that knows no secret yet.
func NewRedactor() *Redactor { return &Redactor{secrets: map[string]bool{}} }

// Add registers secrets. Those shorter than MinSecretLen are ignored.
// Adding to a nil Redactor does nothing.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := false
	for _, s := range secrets {
		if len(s) < MinSecretLen || r.secrets[s] {
			continue
		}
		r.secrets[s] = true
		changed = true
	}
	if !changed {
		return
	}
	set := map[string]bool{}
	for s := range r.secrets {
		for _, p := range encodings(s) {
			set[p] = true
		}
	}
	r.patterns = r.patterns[:0]
	for p := range set {
		r.patterns = append(r.patterns, p)
	}
	// At one position the replacer tries its patterns in order: the
	// longest first, so that a secret containing another is replaced
	// whole.
	sort.Slice(r.patterns, func(i, j int) bool {
		if len(r.patterns[i]) != len(r.patterns[j]) {
			return len(r.patterns[i]) > len(r.patterns[j])
		}
		return r.patterns[i] < r.patterns[j]
	})
	pairs := make([]string, 0, 2*len(r.patterns))
	for _, p := range r.patterns {
		pairs = append(pairs, p, Redacted)
	}
	r.repl = strings.NewReplacer(pairs...)
}

// encodings lists s as it may appear in a report or a recorded frame.
func encodings(s string) []string {
	out := []string{s, Sanitize(s, false), html.EscapeString(s), template.HTMLEscapeString(s),
		strings.ReplaceAll(html.EscapeString(s), "&#34;", "&quot;"),
		// html/template's text escaping also escapes "+".
		strings.ReplaceAll(template.HTMLEscapeString(s), "+", "&#43;")}
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	out = append(out, b.String())
	for _, escapeHTML := range []bool{true, false} {
		b.Reset()
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		if enc.Encode(s) == nil {
			j := strings.TrimSuffix(b.String(), "\n")
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(j, `"`), `"`))
		}
	}
	return out
}

// Empty reports whether r knows no secret.
func (r *Redactor) Empty() bool {
	if r == nil {
		return true
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.repl == nil
}

func (r *Redactor) replacer() *strings.Replacer {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.repl
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if repl := r.replacer(); repl != nil {
		return repl.Replace(s)
	}
	return s
}

// Bytes returns b with every secret replaced; b itself when there is
// none.
func (r *Redactor) Bytes(b []byte) []byte {
	repl := r.replacer()
	if repl == nil || len(b) == 0 {
		return b
	}
	s := string(b)
	if out := repl.Replace(s); out != s {
		return []byte(out)
	}
	return b
}

// decodedJSON redacts the strings of a JSON document as decoded: a
// server may write a secret with escapes ("\u0074ok…") that no byte
// pattern matches. It returns the document re-encoded when a string
// changed (object keys then sorted), and raw itself otherwise, or when
// raw is not JSON.
func (r *Redactor) decodedJSON(raw []byte) []byte {
	if r.Empty() || bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	changed := false
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if y := r.String(x); y != x {
				changed = true
				return y
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k, e := range x {
				if rk := r.String(k); rk != k {
					changed = true
					delete(x, k)
					k = rk
				}
				x[k] = walk(e)
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// maxPattern is the length of the longest pattern.
func (r *Redactor) maxPattern() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if len(r.patterns) == 0 {
		return 0
	}
	return len(r.patterns[0])
}

// heldBack is the length of the longest suffix of b that is a proper
// prefix of a pattern: bytes that a later write may complete into a
// secret.
func (r *Redactor) heldBack(b []byte) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	best := 0
	for _, p := range r.patterns {
		for k := min(len(p)-1, len(b)); k > best; k-- {
			if bytes.HasSuffix(b, []byte(p[:k])) {
				best = k
				break
			}
		}
	}
	return best
}

// Writer returns a writer that redacts everything written through it
// before passing it on to w, even a secret split across writes: bytes
// that may begin a secret are held back until the next write shows
// whether they do. Flush writes what is held back.
func (r *Redactor) Writer(w io.Writer) *RedactWriter {
	return &RedactWriter{w: w, r: r}
}

// RedactWriter is the writer of Redactor.Writer.
type RedactWriter struct {
	mu      sync.Mutex
	w       io.Writer
	r       *Redactor
	pending []byte
}

// Write redacts p and writes it on, less any bytes held back. It
// reports len(p) on success.
func (w *RedactWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.r.Empty() && len(w.pending) == 0 {
		return w.w.Write(p)
	}
	buf := w.r.Bytes(append(w.pending, p...))
	keep := w.r.heldBack(buf)
	out := buf[:len(buf)-keep]
	w.pending = append([]byte(nil), buf[len(buf)-keep:]...)
	if len(out) > 0 {
		if _, err := w.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes the bytes held back.
func (w *RedactWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	out := w.r.Bytes(w.pending)
	w.pending = nil
	_, err := w.w.Write(out)
	return err
}

// Unwrap returns the writer underneath, for terminal detection.
func (w *RedactWriter) Unwrap() io.Writer { return w.w }
