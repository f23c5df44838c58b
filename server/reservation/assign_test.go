package reservation

import (
	"slices"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
)

// avail asks s for the nodes free from start to end with attrs and
// returns their names, or the refusal.
func avail(s *Service, start, end time.Time, attrs ...batchreq.Attr) ([]string, *reply) {
	r := &reply{}
	s.AvailNodes(r, &batchreq.ResvAvail{Start: start.Unix(), End: end.Unix(), Attrs: attrs})
	if r.p == nil {
		return nil, r
	}
	var names []string
	for _, o := range r.p.Status {
		names = append(names, o.Name)
	}
	return names, r
}

// TestAvailNodesPartition: plus_availnodes without -partition counts the
// nodes of no partition, with -partition p1 those of p1, each less the
// ones a reservation holds in the window (as plus_reserve would assign
// them); a partition no node is in is refused with plus_reserve's
// message.
func TestAvailNodesPartition(t *testing.T) {
	h := newFakeHost(t, t.TempDir())
	h.nodes[1].Partition, h.nodes[2].Partition = "p1", "p1" // n2, n3
	s, err := New(h, h.st)
	if err != nil {
		t.Fatal(err)
	}
	start := h.now.Add(time.Hour)
	end := start.Add(time.Hour)
	part := func(p string) batchreq.Attr { return batchreq.NewAttr(batchreq.ATTR_resv_partition, p) }
	check := func(what string, want []string, attrs ...batchreq.Attr) {
		t.Helper()
		got, r := avail(s, start, end, attrs...)
		if r.code != 0 || !slices.Equal(got, want) {
			t.Errorf("%s: nodes %v (refusal %d %q), want %v", what, got, r.code, r.msg, want)
		}
	}
	check("no partition", []string{"n1"})
	check("empty partition", []string{"n1"}, part(""))
	check("p1", []string{"n2", "n3"}, part("p1"))

	// R1 holds one node of p1 in the window: one is left there, and n1
	// is untouched.
	if r := h.submit(t, s, alice, false, submitAttrs(start, end, "1", part("p1"))); r.code != 0 {
		t.Fatalf("submit in p1: %d %q", r.code, r.msg)
	}
	got, r := avail(s, start, end, part("p1"))
	if r.code != 0 || len(got) != 1 || !slices.Contains([]string{"n2", "n3"}, got[0]) {
		t.Errorf("p1 with R1: nodes %v (refusal %d %q), want one of n2, n3", got, r.code, r.msg)
	}
	check("no partition with R1", []string{"n1"})
	// After R1's window p1 has both again.
	if got, r := avail(s, end, end.Add(time.Hour), part("p1")); r.code != 0 || len(got) != 2 {
		t.Errorf("p1 after R1: nodes %v (refusal %d %q), want n2 and n3", got, r.code, r.msg)
	}

	// The count agrees with what plus_reserve -partition gets.
	if r := h.submit(t, s, bob, false, submitAttrs(start, end, "2", part("p1"))); r.code != batchreq.PBSE_RESCUNAV {
		t.Errorf("two nodes of p1 with one free: %d %q, want refused", r.code, r.msg)
	}

	// Unknown: refused, the same message as plus_reserve's.
	_, r = avail(s, start, end, part("p9"))
	sub := h.submit(t, s, alice, false, submitAttrs(start, end, "1", part("p9")))
	want := "unknown partition p9: no node is in it"
	if r.code != batchreq.PBSE_BADATVAL || r.msg != want || r.p != nil {
		t.Errorf("p9: %d %q (reply %v), want %d %q", r.code, r.msg, r.p, batchreq.PBSE_BADATVAL, want)
	}
	if sub.code != r.code || sub.msg != r.msg {
		t.Errorf("p9: plus_reserve refused with %d %q, plus_availnodes with %d %q", sub.code, sub.msg, r.code, r.msg)
	}
	// A backwards window is refused before the partition is looked at.
	if _, r := avail(s, end, start, part("p9")); r.code != batchreq.PBSE_BADATVAL || !strings.Contains(r.msg, "is not after start") {
		t.Errorf("backwards window: %d %q", r.code, r.msg)
	}
}
