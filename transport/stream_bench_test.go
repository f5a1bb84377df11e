package transport

import (
	"bytes"
	"io"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
)

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// BenchmarkStreamThroughput measures inbound messages per second through
// framing, strict decoding and the chronology, over an in-memory pipe.
func BenchmarkStreamThroughput(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"},"_meta":{"progressToken":7}}}` + "\n")
	const batch = 64
	chunk := bytes.Repeat(frame, batch)

	pr, pw := io.Pipe()
	s := NewStream(pr, nopWriteCloser{io.Discard}, StreamConfig{Log: chrono.New(), InChannel: "stdout", OutChannel: "stdin"})
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		n := b.N
		for ; n >= batch; n -= batch {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
		_, _ = pw.Write(chunk[:n*len(frame)])
		_ = pw.Close()
	}()
	for range b.N {
		in, ok := <-s.Inbound()
		if !ok || in.Err != nil {
			b.Fatalf("inbound: ok %v, err %v", ok, in.Err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	_ = pr.Close()
}
