package monitor

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBoundedSetForgetsTheOldest: under any mix of adds (new and known)
// and removes, the set holds exactly the latest n members a plain list
// that drops its oldest would hold.
func TestBoundedSetForgetsTheOldest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 7} {
		b := newBoundedSet(n)
		var want []string // oldest first
		for i := range 5000 {
			k := fmt.Sprint(rng.IntN(3 * n))
			switch rng.IntN(4) {
			case 0:
				b.remove(k)
				want = slices.DeleteFunc(want, func(o string) bool { return o == k })
			default:
				b.add(k)
				if !slices.Contains(want, k) {
					if want = append(want, k); len(want) > n {
						want = want[1:]
					}
				}
			}
			for j := range 3 * n {
				if k := fmt.Sprint(j); b.has(k) != slices.Contains(want, k) {
					t.Fatalf("n=%d, step %d: has(%s) = %v, want %v (members %v)", n, i, k, b.has(k), !b.has(k), want)
				}
			}
			if len(b.in) != len(want) || b.order.Len() != len(want) {
				t.Fatalf("n=%d, step %d: holds %d (order %d), want %d", n, i, len(b.in), b.order.Len(), len(want))
			}
		}
	}
}
