package refserver

import "sync"

// goroutines counts the goroutines a session's end waits for (its request
// handlers and watchers). Unlike a bare sync.WaitGroup it refuses a
// goroutine once the wait has begun: over Streamable HTTP a POST may
// spawn a request's handler while a DELETE ends the session, and an Add
// that races a Wait is a data race. The race detector caught one in a
// full run under load: a POST's checkpoint await spawning its handler
// while the DELETE of its session waited.
type goroutines struct {
	mu      sync.Mutex
	closing bool
	wg      sync.WaitGroup
}

// add counts one goroutine more and reports true, or reports false, and
// counts nothing, once wait has begun: the caller then starts none.
func (g *goroutines) add() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.wg.Add(1)
	return true
}

// done is called once by each goroutine add counted, as it ends.
func (g *goroutines) done() { g.wg.Done() }

// wait refuses new goroutines from now on and waits for those counted.
func (g *goroutines) wait() {
	g.mu.Lock()
	g.closing = true
	g.mu.Unlock()
	g.wg.Wait()
}
