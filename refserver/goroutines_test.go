package refserver

import "testing"

// TestGoroutinesRefuseOnceWaiting: a goroutine counted before the wait
// holds it until it is done; once the wait has begun, add counts nothing
// and says so, so that no Add ever races the Wait.
func TestGoroutinesRefuseOnceWaiting(t *testing.T) {
	var g goroutines
	if !g.add() {
		t.Fatal("add before any wait refused")
	}
	waited := make(chan struct{})
	go func() {
		g.wait()
		close(waited)
	}()
	// The wait has begun once add is refused; it cannot end before done.
	for g.add() {
		g.done()
	}
	select {
	case <-waited:
		t.Fatal("wait returned while a counted goroutine was running")
	default:
	}
	g.done()
	<-waited
	if g.add() {
		t.Fatal("add after the wait counted a goroutine")
	}
}
