package syncset

import (
	"errors"
	"math"
	"slices"
	"testing"

	pbsattr "gopbs/attr"
)

// TestCheapestFirst: a set of three is released one job at a time, the
// cheapest first, each next one when the previous is ready.
func TestCheapestFirst(t *testing.T) {
	var tb Table
	if got := tb.Open("1.a", "1.a@a", 2, 300); got != nil {
		t.Fatalf("incomplete set released %v", got)
	}
	if got, err := tb.Register("1.a", "2.a@a", 200); err != nil || got != nil {
		t.Fatalf("second registration: %v %v", got, err)
	}
	got, err := tb.Register("1.a", "7.b@b:15011", 100)
	if err != nil || !slices.Equal(got, []string{"7.b@b:15011"}) {
		t.Fatalf("complete set released %v %v, want the cheapest", got, err)
	}
	// nothing more is released until the first one starts
	if got, _ := tb.Register("1.a", "7.b@b:15011", 100); got != nil {
		t.Fatalf("repeated registration released %v", got)
	}
	if got := tb.Ready("1.a", "7.b@b:15011"); !slices.Equal(got, []string{"2.a@a"}) {
		t.Fatalf("after the first ready: %v", got)
	}
	if got := tb.Ready("1.a", "2.a@a"); !slices.Equal(got, []string{"1.a@a"}) {
		t.Fatalf("after the second ready: %v", got)
	}
	if _, ok := tb.Set("1.a"); !ok {
		t.Fatal("set forgotten before its master started")
	}
	if got := tb.Ready("1.a", "1.a@a"); got != nil {
		t.Fatalf("after the last ready: %v", got)
	}
	if _, ok := tb.Set("1.a"); ok {
		t.Fatal("a set whose jobs all started is kept")
	}
}

// TestTiesAndMasterFirst: equal costs go in registration order, the
// master first; a set of one releases its master at once.
func TestTiesAndMasterFirst(t *testing.T) {
	var tb Table
	tb.Open("1.a", "1.a@a", 2, 5)
	tb.Register("1.a", "3.a@a", 5)
	if got, _ := tb.Register("1.a", "2.a@a", 5); !slices.Equal(got, []string{"1.a@a"}) {
		t.Fatalf("tie: %v, want the master", got)
	}
	if got := tb.Ready("1.a", "1.a@a"); !slices.Equal(got, []string{"3.a@a"}) {
		t.Fatalf("tie: %v, want the first registered", got)
	}
	var one Table
	if got := one.Open("9.a", "9.a@a", 0, 42); !slices.Equal(got, []string{"9.a@a"}) {
		t.Fatalf("set of one: %v", got)
	}
}

func TestRegisterErrors(t *testing.T) {
	var tb Table
	if _, err := tb.Register("1.a", "2.a@a", 0); !errors.Is(err, ErrNoMaster) {
		t.Fatalf("no master: %v", err)
	}
	tb.Open("1.a", "1.a@a", 1, 0)
	if _, err := tb.Register("1.a", "2 a", 0); !errors.Is(err, ErrBadJob) {
		t.Fatalf("bad job: %v", err)
	}
}

// TestLeaveAndAbort: a released member that leaves before it starts lets
// the next one go; aborting the master names the members not started.
func TestLeaveAndAbort(t *testing.T) {
	var tb Table
	tb.Open("1.a", "1.a@a", 3, 50)
	tb.Register("1.a", "2.a@a", 10)
	tb.Register("1.a", "3.a@a", 20)
	if got, _ := tb.Register("1.a", "4.b@b", 30); !slices.Equal(got, []string{"2.a@a"}) {
		t.Fatalf("first release %v", got)
	}
	if got := tb.Leave("1.a", "2.a@a"); !slices.Equal(got, []string{"3.a@a"}) {
		t.Fatalf("after the released job left: %v", got)
	}
	if got := tb.Leave("1.a", "1.a@a"); got != nil {
		t.Fatalf("the master cannot leave: %v", got)
	}
	tb.Ready("1.a", "3.a@a")
	if got := tb.Abort("1.a"); !slices.Equal(got, []string{"4.b@b"}) {
		t.Fatalf("abort: %v", got)
	}
	if _, ok := tb.Set("1.a"); ok {
		t.Fatal("aborted set kept")
	}
}

func TestAwaitStarted(t *testing.T) {
	var tb Table
	tb.Await("5.b", "1.a@a:15001")
	if m, ok := tb.Started("5.b"); !ok || m != "1.a@a:15001" {
		t.Fatalf("started: %q %v", m, ok)
	}
	if _, ok := tb.Started("5.b"); ok {
		t.Fatal("started twice")
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	var tb Table
	tb.Open("1.a", "1.a@a", 2, 300)
	tb.Register("1.a", "2.a@a", 200)
	tb.Register("1.a", "7.b@b:15011", -4)
	tb.Open("9.a", "9.a@a", 5, 1)
	tb.Await("3.a", "11.c@c")
	b := tb.Encode()
	var back Table
	if err := back.Decode(b); err != nil {
		t.Fatal(err)
	}
	if string(back.Encode()) != string(b) {
		t.Fatalf("round trip:\n%s\n%s", b, back.Encode())
	}
	s, _ := back.Set("1.a")
	if !s.Members[2].Released || s.Members[1].Released || s.Count != 2 {
		t.Fatalf("decoded set %+v", s)
	}
	for _, bad := range []string{"nonsense\n", header + "\nmember 1.a 0 0 0\n", header + "\nset 1.a x\n",
		header + "\nset 1.a 1\n", header + "\nset 1.a 1\nmember 1.a@a 0 2 0\n", header + "\nwait 1\n", header + "\nfoo\n"} {
		keep := tb
		if err := keep.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
	var empty Table
	if err := empty.Decode(nil); err != nil || len(empty.Masters()) != 0 {
		t.Fatalf("empty: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	var tb Table
	tb.Open("1.a", "1.a@a", 2, 300)
	tb.Register("1.a", "2.a@a", 200)
	tb.Await("3.a", "11.c@c")
	tb.Post(Message{To: "c:1", Op: 2, Parent: "3.c", Child: "1.a@a", Cost: -1})
	f.Add(tb.Encode())
	f.Add([]byte(header + "\nset x 0\nmember x 0 1 1\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tb Table
		if err := tb.Decode(b); err != nil {
			return
		}
		enc := tb.Encode()
		var again Table
		if err := again.Decode(enc); err != nil {
			t.Fatalf("re-decode of %q: %v", enc, err)
		}
		if string(again.Encode()) != string(enc) {
			t.Fatalf("unstable encoding %q", enc)
		}
		for _, m := range tb.Masters() {
			tb.Ready(m, "x")
			tb.Abort(m)
		}
	})
}

func TestCost(t *testing.T) {
	p := Prices{PerUnit: map[string]int64{"mem": 2, "walltime": 1, "ncpus": 100, "nodes": 1000}, System: 7}
	req := []Resource{
		{Name: "mem", Type: pbsattr.TypeSize, Value: "1500kb"}, // 2 MB rounded up → 4
		{Name: "walltime", Type: pbsattr.TypeTime, Value: "00:01:40"},
		{Name: "ncpus", Type: pbsattr.TypeLong, Value: "3"},
		{Name: "nodes", Type: pbsattr.TypeNodeSpec, Value: "2:ppn=2+node7"},
		{Name: "cput", Type: pbsattr.TypeTime, Value: "10:00:00"}, // no price
	}
	if got, want := p.Cost(req), int64(7+4+100+300+3000); got != want {
		t.Fatalf("cost %d, want %d", got, want)
	}
	if got := (Prices{}).Cost(req); got != 0 {
		t.Fatalf("no prices: %d", got)
	}
	huge := Prices{PerUnit: map[string]int64{"ncpus": math.MaxInt64}}
	if got := huge.Cost([]Resource{{Name: "ncpus", Type: pbsattr.TypeLong, Value: "3"}}); got != math.MaxInt64 {
		t.Fatalf("saturation: %d", got)
	}
	for v, want := range map[string]int64{"5": 5, "5b": 5, "-3": -3, " 12 ": 12} {
		if got, ok := ParsePrice(v); !ok || got != want {
			t.Errorf("ParsePrice(%q) = %d %v", v, got, ok)
		}
	}
	if _, ok := ParsePrice("x"); ok {
		t.Error("ParsePrice(x) accepted")
	}
}

func TestOutbox(t *testing.T) {
	var tb Table
	a := tb.Post(Message{To: "b:15011", Op: 1, Owner: "alice", Parent: "1.a", Child: "5.b@b:15011", Cost: 7})
	b := tb.Post(Message{To: "c", Op: 3, Parent: "2.c", Child: "6.a@a"})
	if a == 0 || b <= a {
		t.Fatalf("sequence numbers %d %d", a, b)
	}
	if tb.Post(Message{To: "c d", Parent: "1", Child: "2"}) != 0 {
		t.Fatal("a message with white space was kept")
	}
	var back Table
	if err := back.Decode(tb.Encode()); err != nil {
		t.Fatal(err)
	}
	if got := back.Outbox(); len(got) != 2 || got[0] != (Message{Seq: a, To: "b:15011", Op: 1, Owner: "alice", Parent: "1.a", Child: "5.b@b:15011", Cost: 7}) || got[1].Owner != "" {
		t.Fatalf("decoded outbox %+v", got)
	}
	back.Delivered(a)
	if got := back.Outbox(); len(got) != 1 || got[0].Seq != b {
		t.Fatalf("after delivery %+v", got)
	}
	if c := back.Post(Message{To: "c", Parent: "3.c", Child: "7.a@a"}); c <= b {
		t.Fatalf("sequence after decode %d, last %d", c, b)
	}
	if err := back.Decode([]byte(header + "\nmsg 2 c 1 - p c 0\nmsg 1 c 1 - p c 0\n")); err == nil {
		t.Fatal("decreasing sequence accepted")
	}
}
