// Package ring is a bounded first-in first-out list: it keeps the last n
// values pushed, and the next value takes the oldest one's place. The
// rules, the judge and the schema check use it to keep what a long
// conversation would otherwise grow without bound (the IDs RPC-6
// remembers, the events before a finding, the requests answered) in
// memory that follows what is in flight, without allocating once full.
package ring

import "iter"

// Ring keeps the last n values pushed, oldest first. Make it with New.
type Ring[T any] struct {
	n     int
	items []T
	// head is the index of the oldest value once the ring is full (0
	// until then).
	head int
}

// New returns an empty Ring that keeps n values (n > 0).
func New[T any](n int) *Ring[T] { return &Ring[T]{n: n} }

// Push adds v; when the ring was full, it returns the oldest value,
// which it no longer holds, and evicted true.
func (r *Ring[T]) Push(v T) (oldest T, evicted bool) {
	if len(r.items) < r.n {
		r.items = append(r.items, v)
		return oldest, false
	}
	oldest, r.items[r.head] = r.items[r.head], v
	r.head = (r.head + 1) % r.n
	return oldest, true
}

// Len is how many values the ring holds.
func (r *Ring[T]) Len() int { return len(r.items) }

// All yields the values held, oldest first.
func (r *Ring[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		for i := range r.items {
			if !yield(r.items[(r.head+i)%len(r.items)]) {
				return
			}
		}
	}
}

// DeleteFunc removes the values del reports true for, keeping the order
// of the others.
func (r *Ring[T]) DeleteFunc(del func(T) bool) {
	kept := make([]T, 0, len(r.items))
	for v := range r.All() {
		if !del(v) {
			kept = append(kept, v)
		}
	}
	r.items, r.head = kept, 0
}
