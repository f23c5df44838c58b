package state

import "testing"

// TestOrder: objects are numbered in creation order from 0, and the ones
// created after a recovery come after every recovered one.
func TestOrder(t *testing.T) {
	var o Order
	if o.Peek() != 0 || o.Next() != 0 || o.Next() != 1 || o.Peek() != 2 {
		t.Fatalf("zero Order numbers from 0: peek %d", o.Peek())
	}
	o.Recovered(7)
	o.Recovered(3)
	if o.Peek() != 8 || o.Next() != 8 || o.Next() != 9 {
		t.Errorf("after recovering 7 and 3: peek %d", o.Peek())
	}
}
