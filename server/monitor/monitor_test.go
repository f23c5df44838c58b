package monitor

import (
	"testing"
	"time"
)

func TestQueueNodeFilter(t *testing.T) {
	q := Queue{Counts: [NumJobStates]int{1, 2, 3, 0, 4, 0, 5}}
	if q.Total() != 15 {
		t.Errorf("Total %d", q.Total())
	}
	if s := (Node{States: []string{"down", "offline"}}).State(); s != "down,offline" {
		t.Errorf("State %q", s)
	}
	j := Job{Owner: "alice", State: "R"}
	for f, want := range map[JobFilter]bool{
		{}: true, {User: "alice"}: true, {State: "R"}: true, {User: "alice", State: "R"}: true,
		{User: "bob"}: false, {State: "Q"}: false, {User: "alice", State: "Q"}: false,
	} {
		if got := f.Match(j); got != want {
			t.Errorf("%+v.Match = %v, want %v", f, got, want)
		}
	}
	var o Observer = Discard{}
	o.Request(1, time.Second)
	o.StoreCommit(time.Second, 1)
	o.SchedCycle("default", time.Second)
	o.MomLinkError(MomConnect)
}
