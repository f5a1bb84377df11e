package refserver

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/mcpflight/mcpflight/internal/goroutines"
)

// realm is the state that requests act on: the control extension's
// checkpoints, operations by key and their accounting, durable tasks and
// open subscriptions. A 2025-11-25 session has a realm of its own (the
// session is the scope). 2026-07-28 requests carry no session, so the
// Server keeps their realms, one per control scope (the request's
// _meta "io.mcpflight/scope", "" when absent): every 2026 request with
// the same scope, on any connection or transport of the Server, sees the
// same checkpoints, operations, counters and tasks. That is what lets a
// task created on one connection be read on another (RPC-60) and a
// checkpoint be awaited over stateless HTTP.
//
// A session embeds *realm, so ss.mu is the realm's lock: it guards the
// realm and the maps of every session that shares it.
type realm struct {
	mu          sync.Mutex
	checkpoints map[string]*checkpoint
	ops         map[string]*call // by operation key
	seq         uint64
	started     int
	active      int
	completed   int
	cancelledN  int
	released    int
	effects     int
	tasks       *taskStore // durable tasks (tasks.go, tasksext.go)

	// reqs counts live request goroutines of the realm (spawnReq), for
	// admit: a 2026 realm bounds the requests in flight across all the
	// connections and POSTs that share it.
	reqs atomic.Int64
	// ordinary counts the slow calls that named no key (ordinarySlow).
	ordinary atomic.Uint64

	// The rest belongs to 2026-07-28 realms only.
	scope string
	// handleMu serialises the handling of the realm's requests, as one
	// connection's reader does: admission and registration of one request
	// finish before the next begins, whatever connection it came on.
	handleMu sync.Mutex
	// life ends when the realm closes; bg is the realm's own session, on
	// which task workers run (they outlive the request that created the
	// task, and the connection or POST it came on).
	life       context.Context
	end        context.CancelFunc
	bgWG       goroutines.Group
	bg         *session
	tokens2026 map[string]*call // progress tokens of every session of the realm
	// Guarded by mu.
	subs []*subscription // in the order they were opened
	// stickyTasks: a request declared the tasks extension
	// (FaultStickyCapabilities only).
	stickyTasks bool
	// stickyVersion is the protocol version of the last request served
	// (FaultStickyVersion only).
	stickyVersion string
	holders       int
	closed        bool
	used          uint64 // the registry's clock at the last use
}

func newRealm(scope string) *realm {
	return &realm{
		scope:       scope,
		checkpoints: map[string]*checkpoint{},
		ops:         map[string]*call{},
		tasks:       newTaskStore(),
	}
}

// realmRegistry holds a Server's 2026-07-28 realms by scope.
type realmRegistry struct {
	mu     sync.Mutex
	realms map[string]*realm
	clock  uint64
}

// MaxScopes bounds the 2026-07-28 control scopes a Server holds at once.
// Past it, opening a new scope forgets the least recently used idle one
// (nothing in flight, no task working, no subscription open); when none is
// idle the request is refused with mcp.CodeTooManyRequests.
const MaxScopes = 1024

// errTooManyScopes refuses a request whose new scope does not fit.
type errTooManyScopes struct{}

func (errTooManyScopes) Error() string {
	return "too many control scopes in use (limit 1024); end the work of another scope first"
}

// realm2026 returns the realm of scope and takes one hold on it; the
// holder gives it back with releaseRealm. The realm is created on first
// use.
func (s *Server) realm2026(scope string) (*realm, error) {
	reg := &s.realms
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.clock++
	if r := reg.realms[scope]; r != nil {
		r.mu.Lock()
		r.holders++
		r.used = reg.clock
		r.mu.Unlock()
		return r, nil
	}
	if reg.realms == nil {
		reg.realms = map[string]*realm{}
	}
	if len(reg.realms) >= MaxScopes && !reg.evictIdleLocked() {
		return nil, errTooManyScopes{}
	}
	r := newRealm(scope)
	r.life, r.end = context.WithCancel(context.Background())
	r.tokens2026 = map[string]*call{}
	r.holders = 1
	r.used = reg.clock
	bg := newSession2026(r, s, &output{w: io.Discard}, nil)
	r.bg = bg
	reg.realms[scope] = r
	return r, nil
}

// evictIdleLocked forgets the least recently used idle realm and reports
// whether there was one. Caller holds reg.mu.
func (reg *realmRegistry) evictIdleLocked() bool {
	var victim *realm
	for _, r := range reg.realms {
		if r.idle() && (victim == nil || r.used < victim.used) {
			victim = r
		}
	}
	if victim == nil {
		return false
	}
	delete(reg.realms, victim.scope)
	victim.mu.Lock()
	victim.closed = true
	victim.mu.Unlock()
	victim.end()
	return true
}

// idle reports whether nothing of the realm is running.
func (r *realm) idle() bool {
	if r.reqs.Load() != 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.subs) == 0
}

// releaseRealm gives back one hold on r. The last hold closes it: its
// context ends, which wakes and abandons its task workers, and
// releaseRealm waits for them before it returns.
func (s *Server) releaseRealm(r *realm) {
	reg := &s.realms
	reg.mu.Lock()
	r.mu.Lock()
	r.holders--
	last := r.holders <= 0 && !r.closed
	if last {
		r.closed = true
	}
	r.mu.Unlock()
	if last && reg.realms[r.scope] == r {
		delete(reg.realms, r.scope)
	}
	reg.mu.Unlock()
	if last {
		r.end()
		r.bgWG.Wait()
	}
}
