package goroutines

import (
	"runtime"
	"testing"
)

// TestGroupRefusesOnceWaiting: a goroutine counted before the wait
// holds it until it is done; once the wait has begun, Add counts nothing
// and says so, so that no Add ever races the Wait.
func TestGroupRefusesOnceWaiting(t *testing.T) {
	var g Group
	if !g.Add() {
		t.Fatal("add before any wait refused")
	}
	waited := make(chan struct{})
	go func() {
		g.Wait()
		close(waited)
	}()
	// The wait has begun once Add is refused; it cannot end before Done.
	// Each try yields to the waiting goroutine, so it begins within a few;
	// the bound only keeps a Group that never refuses from spinning on.
	for tries := 0; g.Add(); tries++ {
		g.Done()
		if tries == 1_000_000 {
			t.Fatal("Add still counts goroutines while Wait waits")
		}
		runtime.Gosched()
	}
	select {
	case <-waited:
		t.Fatal("wait returned while a counted goroutine was running")
	default:
	}
	g.Done()
	<-waited
	if g.Add() {
		t.Fatal("add after the wait counted a goroutine")
	}
}
