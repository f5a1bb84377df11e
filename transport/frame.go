package transport

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// FrameReader splits a byte stream into newline-delimited frames (STD-1),
// with a hard limit on frame size. A frame over the limit is discarded up
// to its newline and reported as ErrFrameTooLarge; reading can go on.
type FrameReader struct {
	r   *bufio.Reader
	max int
}

// NewFrameReader reads frames of at most max bytes (DefaultMaxFrame if
// max <= 0) from r.
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	return &FrameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// ReadFrame returns the next frame without its line ending ("\n" or
// "\r\n"). At the end of the stream it returns io.EOF; a final frame with no
// newline is returned first. The returned slice is owned by the caller.
func (f *FrameReader) ReadFrame() ([]byte, error) {
	var frame []byte
	oversized, discarding := 0, false
	for {
		chunk, err := f.r.ReadSlice('\n')
		if !discarding && len(frame)+len(chunk) > f.max+2 {
			// Too big even with a CRLF ending: count the rest, keep none.
			discarding, oversized = true, len(frame)
			frame = nil
		}
		if discarding {
			oversized += len(chunk)
		} else {
			frame = append(frame, chunk...)
		}
		switch err {
		case nil:
			if discarding {
				return nil, fmt.Errorf("%w: %d bytes or more, limit %d", ErrFrameTooLarge, oversized, f.max)
			}
			frame = bytes.TrimSuffix(frame[:len(frame)-1], []byte("\r"))
			if len(frame) > f.max {
				return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, len(frame), f.max)
			}
			return frame, nil
		case bufio.ErrBufferFull:
			continue
		case io.EOF:
			if discarding {
				return nil, fmt.Errorf("%w: %d bytes or more before end of stream, limit %d", ErrFrameTooLarge, oversized, f.max)
			}
			if len(frame) > f.max {
				return nil, fmt.Errorf("%w: %d bytes before end of stream, limit %d", ErrFrameTooLarge, len(frame), f.max)
			}
			if len(frame) > 0 {
				return frame, nil
			}
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}
