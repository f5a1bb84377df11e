package monitor

import "slices"

// boundedSet is a set of strings that keeps at most n: past it, the
// oldest are forgotten. It bounds a rule's history (RPC-6's IDs) so that
// memory follows what is in flight, not the length of the conversation.
//
// Once n are kept, order is a ring whose oldest member is at head, and
// the next member takes the oldest's place: a set that forgets one
// member for each it learns allocates nothing (a slice slid forward by
// one each time was copied whole, n members, every few thousand adds).
type boundedSet struct {
	n     int
	order []string
	head  int
	in    map[string]bool
}

func newBoundedSet(n int) *boundedSet { return &boundedSet{n: n, in: map[string]bool{}} }

func (b *boundedSet) has(k string) bool { return b.in[k] }

func (b *boundedSet) add(k string) {
	if b.in[k] {
		return
	}
	b.in[k] = true
	if len(b.order) < b.n {
		b.order = append(b.order, k) // head is 0 until the ring is full
		return
	}
	delete(b.in, b.order[b.head])
	b.order[b.head] = k
	b.head = (b.head + 1) % b.n
}

// remove forgets k.
func (b *boundedSet) remove(k string) {
	if !b.in[k] {
		return
	}
	delete(b.in, k)
	// Oldest first again from index 0, without k.
	order := append(slices.Clone(b.order[b.head:]), b.order[:b.head]...)
	b.order, b.head = slices.DeleteFunc(order, func(o string) bool { return o == k }), 0
}
