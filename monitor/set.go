package monitor

import "slices"

// boundedSet is a set of strings that keeps at most n: past it, the
// oldest are forgotten. It bounds a rule's history (RPC-6's IDs) so that
// memory follows what is in flight, not the length of the conversation.
type boundedSet struct {
	n     int
	order []string
	in    map[string]bool
}

func newBoundedSet(n int) *boundedSet { return &boundedSet{n: n, in: map[string]bool{}} }

func (b *boundedSet) has(k string) bool { return b.in[k] }

func (b *boundedSet) add(k string) {
	if b.in[k] {
		return
	}
	if len(b.order) == b.n {
		delete(b.in, b.order[0])
		b.order = b.order[1:]
	}
	b.order = append(b.order, k)
	b.in[k] = true
}

// remove forgets k.
func (b *boundedSet) remove(k string) {
	if !b.in[k] {
		return
	}
	delete(b.in, k)
	b.order = slices.DeleteFunc(b.order, func(o string) bool { return o == k })
}
