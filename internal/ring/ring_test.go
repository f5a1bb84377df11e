package ring

import (
	"slices"
	"testing"
)

// TestRing: a ring keeps the last n values oldest first, hands back the
// one each push past n evicts, and keeps its order through a delete.
func TestRing(t *testing.T) {
	r := New[int](3)
	for i := 1; i <= 3; i++ {
		if _, evicted := r.Push(i); evicted {
			t.Fatalf("push %d evicted while the ring had room", i)
		}
	}
	if got := slices.Collect(r.All()); !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("held %v", got)
	}
	for i := 4; i <= 7; i++ {
		if old, evicted := r.Push(i); !evicted || old != i-3 {
			t.Fatalf("push %d evicted %d, %v; want %d", i, old, evicted, i-3)
		}
	}
	if got := slices.Collect(r.All()); !slices.Equal(got, []int{5, 6, 7}) || r.Len() != 3 {
		t.Fatalf("held %v", got)
	}
	r.DeleteFunc(func(v int) bool { return v == 6 })
	if got := slices.Collect(r.All()); !slices.Equal(got, []int{5, 7}) {
		t.Fatalf("after deleting 6: %v", got)
	}
	r.Push(8)
	if old, evicted := r.Push(9); !evicted || old != 5 {
		t.Fatalf("after the delete, the push past n evicted %d, %v; want 5", old, evicted)
	}
	if got := slices.Collect(r.All()); !slices.Equal(got, []int{7, 8, 9}) {
		t.Fatalf("held %v", got)
	}
}
