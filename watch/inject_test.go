//go:build unix

package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpflight/mcpflight/chrono"
	"github.com/mcpflight/mcpflight/jsonrpc"
)

// TestServerInputInjectsBetweenFrames: an injected frame goes to the
// server at once while the host is between frames, and waits for the
// end of the host's frame while it is inside one, even when that end
// comes in the middle of a later piece; the host's bytes are never cut
// into.
func TestServerInputInjectsBetweenFrames(t *testing.T) {
	var got bytes.Buffer
	in := newServerInput(&got)
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	put := func(line string) { in.place(&injected{line: []byte(line)}) }
	put("A\n")
	step(in.forward([]byte(`{"id":1,`)))
	put("B\n")
	put("C\n")
	if want := "A\n{\"id\":1,"; got.String() != want {
		t.Fatalf("before the host's frame ended: %q; want %q", got.String(), want)
	}
	step(in.forward([]byte(`"x":2}` + "\n" + `{"id":2`)))
	step(in.forward([]byte("}\n")))
	put("D\n")
	want := "A\n" + `{"id":1,"x":2}` + "\nB\nC\n" + `{"id":2}` + "\nD\n"
	if got.String() != want {
		t.Fatalf("the server got %q; want %q", got.String(), want)
	}

	in.stop(ErrInjectorClosed)
	if err := in.inject(&injected{line: []byte("E\n")}); !errors.Is(err, ErrInjectorClosed) {
		t.Fatalf("inject after stop: %v", err)
	}
}

// TestCallGivenUpBeforeItIsSent: a Call whose context ends while its
// request still waits for the end of the host's frame takes the request
// back: the server never gets it, and no answer is watched for.
func TestCallGivenUpBeforeItIsSent(t *testing.T) {
	var got bytes.Buffer
	in := newServerInput(&got)
	j := NewInjector()
	j.attach(in, nil)
	if err := in.forward([]byte(`{"id":1,`)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := j.Call(ctx, "tools/call", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call: %v", err)
	}
	in.place(<-in.queue) // what the injection writer does with it
	if err := in.forward([]byte("\"x\":2}\n")); err != nil {
		t.Fatal(err)
	}
	if want := `{"id":1,"x":2}` + "\n"; got.String() != want {
		t.Errorf("the server got %q; want only the host's %q", got.String(), want)
	}
	if n := j.watching.Load(); n != 0 {
		t.Errorf("still watching %d IDs for a request never sent", n)
	}
}

// blockedWriter is a server's stdin whose pipe is full: a Write waits
// until release is closed.
type blockedWriter struct {
	entered chan struct{}
	release chan struct{}
	got     bytes.Buffer
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.release
	return w.got.Write(p)
}

// TestCallHonoursItsContextOnAFullPipe: while the host's bytes wait on a
// full pipe to the server (holding the server's input), a Call still
// returns when its context ends, and its request, never written, stays
// unwritten once the pipe drains.
func TestCallHonoursItsContextOnAFullPipe(t *testing.T) {
	w := &blockedWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
	in := newServerInput(w)
	j := NewInjector()
	j.attach(in, nil)
	done := make(chan struct{})
	defer close(done)
	go in.runInjections(done)
	forwarded := make(chan error, 1)
	go func() { forwarded <- in.forward([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")) }()
	<-w.entered // the host's write now holds the server's input
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := j.Call(ctx, "tools/call", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call: %v", err)
	}
	close(w.release)
	if err := <-forwarded; err != nil {
		t.Fatal(err)
	}
	// A second request goes through the same writer after the first:
	// once it is written, the first was decided.
	answered := make(chan error, 1)
	go func() {
		cctx, ccancel := context.WithTimeout(context.Background(), safety)
		defer ccancel()
		_, err := j.Call(cctx, "ping", nil)
		answered <- err
	}()
	waitUntil(t, "the second request written", func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		return strings.Contains(w.got.String(), j.prefix+"2")
	})
	in.mu.Lock()
	got := w.got.String()
	in.mu.Unlock()
	if strings.Contains(got, j.prefix+"1") {
		t.Errorf("the request given up was written: %q", got)
	}
	j.close()
	if err := <-answered; !errors.Is(err, ErrInjectorClosed) {
		t.Errorf("the second Call after close: %v", err)
	}
}

// TestOutputFilterTakesOnlyItsAnswers: while an ID is watched, its
// answer is taken out of the server's output even when it comes in
// pieces, and every other byte reaches the host in order, whole: a line
// begun before the ID was watched, a request that quotes the ID, a line
// longer than the filter holds.
func TestOutputFilterTakesOnlyItsAnswers(t *testing.T) {
	j := NewInjector()
	answer := make(chan *jsonrpc.Message, 1)
	id := jsonrpc.StringID(j.prefix + "1")
	f := &outputFilter{j: j, lineStart: true}
	var host bytes.Buffer
	emit := func(p []byte) { host.Write(p) }

	f.pass([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1`), emit)
	j.awaited[id.Key()] = answer
	j.watching.Add(1)
	long := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", holdLimit+10) + `"}}` + "\n"
	quoting := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + j.prefix + `1"}}}` + "\n"
	ours := `{"jsonrpc":"2.0","id":"` + j.prefix + `1","result":{"ok":true}}` + "\n"
	stream := `}}` + "\n" + quoting + ours[:20]
	f.pass([]byte(stream), emit)
	if len(answer) != 0 {
		t.Fatal("the answer was taken before its line ended")
	}
	f.pass([]byte(ours[20:]+long[:100]), emit)
	f.pass([]byte(long[100:]), emit)
	f.flush(emit)

	want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}` + "\n" + quoting + long
	if host.String() != want {
		t.Fatalf("the host got %d bytes, want %d:\n%.300q\nwant\n%.300q", host.Len(), len(want), host.String(), want)
	}
	select {
	case msg := <-answer:
		if msg.ID != id || string(msg.Result) != `{"ok":true}` {
			t.Fatalf("the answer taken: %+v", msg)
		}
	default:
		t.Fatal("the answer was not taken")
	}
	if n := j.watching.Load(); n != 0 {
		t.Fatalf("still watching %d IDs", n)
	}
	// Nothing watched: a piece passes as it is read, in one write.
	var writes int
	f.pass([]byte(ours), func([]byte) { writes++ })
	if writes != 1 {
		t.Fatalf("an unwatched piece took %d writes", writes)
	}
}

// TestInjectorInStdio: through the shim, an injected request reaches the
// server between the host's frames and its answer reaches the Call, not
// the host; the host gets its own answers, and the recording holds the
// host's conversation alone. An answer that comes after its Call gave
// up, or after the host closed stdin, is kept from the host and noted;
// once the host closed stdin, Call fails.
func TestInjectorInStdio(t *testing.T) {
	h := newPipeHost(t)
	w := newWatched(t, RecorderConfig{})
	j := NewInjector()
	cfg := w.config("answer", h.stdinR)
	cfg.Stdout, cfg.Inject = h.stdout, j
	done := runStdio(cfg)

	// The host's first answer proves the server started and the
	// injector is attached.
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got := h.read(t); !strings.Contains(got, `"id":1,`) {
		t.Fatalf("the host's answer: %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), safety)
	msg, err := j.Call(ctx, "tools/call", map[string]any{"name": "observe"})
	cancel()
	if err != nil || !msg.ID.IsString() || string(msg.Result) != `{"method":"tools/call"}` {
		t.Fatalf("Call: %+v, %v", msg, err)
	}
	// An answer given up on: the server answers "later" after the
	// host's next line, which comes once the Call gave up, after the
	// server told the host it has the request.
	gone, cancelGone := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := j.Call(gone, "later", nil)
		gaveUp <- err
	}()
	if got := h.read(t); !strings.Contains(got, `"data":"later"`) {
		t.Fatalf("the host got %q, not the server's notice", got)
	}
	cancelGone()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call given up: %v", err)
	}
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if got := h.read(t); !strings.Contains(got, `"id":2,`) {
		t.Fatalf("the host got %q: not its own answer", got)
	}
	w.sink.waitFor(t, "the note of the late answer", func(e chrono.Event) bool {
		return e.Channel == chrono.ChannelObserver && strings.Contains(e.Text, "after mcpflight stopped waiting")
	})

	// The host closes stdin while a Call awaits its answer, which the
	// server writes at the end of its stdin, while the host still reads.
	closed := make(chan error, 1)
	go func() {
		_, err := j.Call(context.Background(), "later", nil)
		closed <- err
	}()
	if got := h.read(t); !strings.Contains(got, `"data":"later"`) {
		t.Fatalf("the host got %q, not the server's notice", got)
	}
	h.in.Close()
	if err := <-closed; !errors.Is(err, ErrInjectorClosed) {
		t.Fatalf("a Call awaiting its answer when the host closed stdin: %v", err)
	}
	rest, err := io.ReadAll(h.lines)
	if err != nil || len(rest) != 0 {
		t.Fatalf("after the host closed stdin it got %q (%v)", rest, err)
	}
	if code, err := waitStdio(t, done); code != 0 || err != nil {
		t.Fatalf("Stdio: %d, %v", code, err)
	}
	if _, err := j.Call(context.Background(), "ping", nil); !errors.Is(err, ErrInjectorClosed) {
		t.Fatalf("Call after the run: %v", err)
	}
	received, err := os.ReadFile(w.dumpPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(received), "\n"), "\n")
	if len(lines) != 5 || !strings.Contains(lines[1], j.prefix+"1") || !strings.Contains(lines[2], j.prefix+"2") || !strings.Contains(lines[4], j.prefix+"3") {
		t.Fatalf("the server read:\n%s", received)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("the server read a line cut into: %q", l)
		}
	}
	var frames []string
	late := 0
	for _, e := range w.events(t) {
		if e.Channel == chrono.ChannelObserver && strings.Contains(e.Text, "after mcpflight stopped waiting") {
			late++
		}
		if e.Kind == chrono.KindFrame {
			frames = append(frames, string(e.Raw))
		}
		if strings.Contains(string(e.Raw), j.prefix) {
			t.Errorf("the recording holds an injected frame: %s", e.Raw)
		}
	}
	if len(frames) != 6 {
		t.Errorf("the recording holds %d frames, want the host's 2, their 2 answers and the server's 2 notices:\n%s", len(frames), strings.Join(frames, "\n"))
	}
	if late != 2 {
		t.Errorf("%d notes of a late answer; want 2", late)
	}
}
