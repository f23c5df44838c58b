package lifecycle

import (
	"strconv"
	"testing"
	"time"
)

// TestConsequencesBounded: removals are forgotten after consequenceAge
// and beyond consequenceMax.
func TestConsequencesBounded(t *testing.T) {
	var c consequences
	t0 := time.Unix(1_800_000_000, 0)
	c.note("1.vm", "alice", t0)
	if owner, ok := c.removed("1.vm", t0.Add(consequenceAge)); !ok || owner != "alice" {
		t.Fatalf("removed at the age limit: %q %v", owner, ok)
	}
	if _, ok := c.removed("1.vm", t0.Add(consequenceAge+time.Second)); ok {
		t.Fatal("remembered past consequenceAge")
	}
	for i := 0; i < consequenceMax+10; i++ {
		c.note(strconv.Itoa(i)+".vm", "alice", t0)
	}
	if len(c.at) != consequenceMax || len(c.order) != consequenceMax {
		t.Fatalf("%d entries (%d ordered), want %d", len(c.at), len(c.order), consequenceMax)
	}
	if _, ok := c.removed("0.vm", t0); ok {
		t.Fatal("the oldest entry beyond consequenceMax is remembered")
	}
	c.note("late.vm", "bob", t0.Add(consequenceAge+time.Minute))
	if len(c.at) != 1 {
		t.Fatalf("%d entries after the others aged, want 1", len(c.at))
	}
}
