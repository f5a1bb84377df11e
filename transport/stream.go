package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// StreamConfig configures a newline-framed stream connection.
type StreamConfig struct {
	// Log receives every frame. Required.
	Log *chrono.Log
	// InChannel and OutChannel name the channels in the chronology
	// (for stdio: "stdout" and "stdin").
	InChannel, OutChannel string
	// MaxFrame limits inbound frames; DefaultMaxFrame if zero.
	MaxFrame int
	// InboundBuffer is the capacity of the inbound channel; 64 if zero.
	InboundBuffer int
	// OnClose runs once when Close is called, after the writer has been
	// closed; it performs and grades the rest of the teardown.
	OnClose func(ctx context.Context) Teardown
}

// Stream is a Conn over a reader and a writer with newline framing. It is
// the core of the stdio transport and of in-memory pipes.
type Stream struct {
	cfg     StreamConfig
	w       io.WriteCloser
	wmu     sync.Mutex
	inbound chan Inbound
	done    chan struct{}
	errMu   sync.Mutex
	err     error
	closeMu sync.Once
	result  Teardown
}

// NewStream starts reading frames from r and returns the connection.
// Closing the connection closes w; r must end when the peer goes away.
func NewStream(r io.Reader, w io.WriteCloser, cfg StreamConfig) *Stream {
	if cfg.InChannel == "" {
		cfg.InChannel = "in"
	}
	if cfg.OutChannel == "" {
		cfg.OutChannel = "out"
	}
	if cfg.InboundBuffer <= 0 {
		cfg.InboundBuffer = 64
	}
	s := &Stream{cfg: cfg, w: w, inbound: make(chan Inbound, cfg.InboundBuffer), done: make(chan struct{})}
	go s.readLoop(NewFrameReader(r, cfg.MaxFrame))
	return s
}

func (s *Stream) readLoop(fr *FrameReader) {
	defer close(s.done)
	defer close(s.inbound)
	for {
		raw, err := fr.ReadFrame()
		switch {
		case errors.Is(err, io.EOF):
			s.cfg.Log.Harness(chrono.KindNote, s.cfg.InChannel, "end of stream")
			return
		case errors.Is(err, ErrFrameTooLarge):
			// A bound of ours cut what the peer said: Err reports it
			// from now on, so that no verdict silently rests on a
			// stream with a hole in it.
			s.setErr(fmt.Errorf("reading %s: %w", s.cfg.InChannel, err))
			e := s.cfg.Log.Harness(chrono.KindError, s.cfg.InChannel, err.Error())
			s.inbound <- Inbound{Err: err, Seq: e.Seq}
			continue
		case err != nil:
			s.setErr(fmt.Errorf("reading %s: %w", s.cfg.InChannel, err))
			s.cfg.Log.Harness(chrono.KindError, s.cfg.InChannel, err.Error())
			return
		}
		msg, derr := jsonrpc.Decode(raw)
		e := s.cfg.Log.Frame(chrono.In, s.cfg.InChannel, raw, msg, derr)
		in := Inbound{Msg: msg, Raw: raw, Seq: e.Seq}
		if derr != nil {
			in.Err = derr
		}
		s.inbound <- in
	}
}

func (s *Stream) setErr(err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// Err reports why reading stopped, if it stopped abnormally, or the first
// oversized frame (ErrFrameTooLarge) while reading goes on.
func (s *Stream) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Inbound delivers frames in arrival order.
func (s *Stream) Inbound() <-chan Inbound { return s.inbound }

// Done is closed when the inbound side has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Send writes raw plus a newline as one frame and records it. The record is
// made before the write so that the chronology orders a request before
// any reply to it.
func (s *Stream) Send(ctx context.Context, raw []byte) error {
	_, err := s.SendEncoded(ctx, raw, nil)
	return err
}

// SendEncoded is Send for a frame the caller encoded: msg, when not nil,
// is what jsonrpc.Decode reads from raw (jsonrpc.Encoded), and the
// chronology records it without decoding raw again. It returns the
// frame's sequence number in the chronology.
func (s *Stream) SendEncoded(ctx context.Context, raw []byte, msg *jsonrpc.Message) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	frame := make([]byte, 0, len(raw)+1)
	frame = append(append(frame, raw...), '\n')
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.w == nil {
		return 0, ErrClosed
	}
	e := s.cfg.Log.Frame(chrono.Out, s.cfg.OutChannel, raw, msg, nil)
	if _, err := s.w.Write(frame); err != nil {
		s.cfg.Log.Harness(chrono.KindError, s.cfg.OutChannel, "write failed: "+err.Error())
		return e.Seq, fmt.Errorf("writing %s: %w", s.cfg.OutChannel, err)
	}
	return e.Seq, nil
}

// Close closes the writer (the peer's input), then runs OnClose to finish
// and grade the teardown. It is safe to call more than once.
func (s *Stream) Close(ctx context.Context) Teardown {
	s.closeMu.Do(func() {
		s.wmu.Lock()
		w := s.w
		s.w = nil
		s.wmu.Unlock()
		if w != nil {
			s.cfg.Log.Harness(chrono.KindState, s.cfg.OutChannel, "closing "+s.cfg.OutChannel)
			_ = w.Close()
		}
		if s.cfg.OnClose != nil {
			s.result = s.cfg.OnClose(ctx)
		} else {
			s.result = Teardown{ExitedAfter: StepCloseInput}
		}
	})
	return s.result
}

var (
	_ Conn          = (*Stream)(nil)
	_ EncodedSender = (*Stream)(nil)
)
