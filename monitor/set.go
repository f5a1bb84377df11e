package monitor

import "github.com/mcpflight/mcpflight/internal/ring"

// boundedSet is a set of strings that keeps at most n: past it, the
// oldest are forgotten. It bounds a rule's history (RPC-6's IDs) so that
// memory follows what is in flight, not the length of the conversation.
// Its order is a ring, so that a set that forgets one member for each it
// learns allocates nothing.
type boundedSet struct {
	order *ring.Ring[string]
	in    map[string]bool
}

func newBoundedSet(n int) *boundedSet {
	return &boundedSet{order: ring.New[string](n), in: map[string]bool{}}
}

func (b *boundedSet) has(k string) bool { return b.in[k] }

func (b *boundedSet) add(k string) {
	if b.in[k] {
		return
	}
	b.in[k] = true
	if oldest, evicted := b.order.Push(k); evicted {
		delete(b.in, oldest)
	}
}

// remove forgets k.
func (b *boundedSet) remove(k string) {
	if !b.in[k] {
		return
	}
	delete(b.in, k)
	b.order.DeleteFunc(func(o string) bool { return o == k })
}
