package watch

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpflight/mcpflight/chrono"
)

// maxDecoded bounds the bytes decoded of one compressed body, so that a
// compression bomb costs the recorder a bounded amount of work.
const maxDecoded = 256 << 20

// bodyEncoding is a body's Content-Encoding, lower case: "" for none or
// identity, "gzip" or "deflate" for what the recorder decodes, any other
// value (br, zstd, several encodings) for a body it records as it is.
func bodyEncoding(h http.Header) string {
	var encs []string
	for _, v := range h.Values("Content-Encoding") {
		for _, e := range strings.Split(v, ",") {
			if e = strings.ToLower(strings.TrimSpace(e)); e != "" && e != "identity" {
				encs = append(encs, e)
			}
		}
	}
	switch {
	case len(encs) == 0:
		return ""
	case len(encs) == 1 && (encs[0] == "gzip" || encs[0] == "x-gzip"):
		return "gzip"
	case len(encs) == 1 && encs[0] == "deflate":
		return "deflate"
	}
	return strings.Join(encs, ", ")
}

// decodable reports whether the recorder decodes an encoding.
func decodable(enc string) bool { return enc == "gzip" || enc == "deflate" }

// decoder decompresses a body for the recorder on a goroutine of its own
// (the decompressors pull their input): the recorder writes the
// compressed bytes in, and the goroutine queues the decoded bytes as
// taps of the same stream, marked plain, which the recorder then frames.
type decoder struct {
	pw   *io.PipeWriter
	done chan struct{}
}

// startDecoder starts decoding enc for s.
func (r *Recorder) startDecoder(s *stream, enc string) *decoder {
	pr, pw := io.Pipe()
	d := &decoder{pw: pw, done: make(chan struct{})}
	r.decoders[d] = struct{}{}
	go func() {
		defer close(d.done)
		// Whatever happens, the pipe is read to its end, so that the
		// recorder's writes never block.
		defer io.Copy(io.Discard, pr)
		zr, err := newDecompressor(enc, pr)
		if err == nil {
			err = r.pumpDecoded(s, zr)
		}
		if err != nil {
			r.pushInternal(tap{op: opEvent, at: time.Now(), ev: &chrono.Event{Dir: chrono.Harness, Kind: chrono.KindError,
				Channel: s.channel, Text: chrono.Sanitize(fmt.Sprintf("decoding the %s body failed: %v; the rest is not recorded", enc, err), false)}})
		}
	}()
	return d
}

// newDecompressor reads enc from r. HTTP's "deflate" is zlib data, but
// some servers send raw deflate: the zlib header tells them apart.
func newDecompressor(enc string, r io.Reader) (io.Reader, error) {
	if enc == "gzip" {
		return gzip.NewReader(r)
	}
	br := bufio.NewReader(r)
	if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}

// pumpDecoded queues what zr decodes as plain taps of s, up to
// maxDecoded bytes.
func (r *Recorder) pumpDecoded(s *stream, zr io.Reader) error {
	buf := make([]byte, 32<<10)
	total := 0
	for {
		n, err := zr.Read(buf)
		if n > 0 {
			if total += n; total > maxDecoded {
				r.pushInternal(tap{op: opEvent, at: time.Now(), ev: &chrono.Event{Dir: chrono.Harness, Kind: chrono.KindNote,
					Channel: s.channel, Text: fmt.Sprintf("the body decodes to more than %d bytes: the rest is not decoded", maxDecoded)}})
				return nil
			}
			r.pushInternal(tap{op: opData, s: s, plain: true, at: time.Now(), data: append([]byte(nil), buf[:n]...)})
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// feed hands compressed bytes to the decoder; it returns once they are
// decoded and queued.
func (d *decoder) feed(p []byte) { _, _ = d.pw.Write(p) }

// finish ends the input and waits until everything decoded is queued.
func (d *decoder) finish(r *Recorder) {
	_ = d.pw.Close()
	<-d.done
	delete(r.decoders, d)
}
