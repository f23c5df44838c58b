package momquery

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"gopbs/dis"
	"gopbs/sched/world"
)

func TestApplyCapturedAnswer(t *testing.T) {
	// Answer of capture 72 (max_load/ideal_load not configured).
	n := &world.Node{Name: "vm"}
	Apply(n, []string{"ncpus=2", "arch=linux", "physmem=24731708kb", "loadave=0.21", "max_load=? 15201", "ideal_load=? 15201"})
	if !n.MomOK || n.NCPUs != 2 || n.Arch != "linux" || n.PhysMem != 24731708<<10 || n.LoadAve != 0.21 || n.MaxLoad != 2 || n.IdealLoad != 2 {
		t.Errorf("node = %+v", n)
	}
	m := &world.Node{}
	Apply(m, []string{"ncpus=? 15201", "arch=x", "physmem=bad", "loadave=?", "max_load=3.5", "ideal_load=1.5"})
	if m.NCPUs != 1 || m.LoadAve != -1 || m.MaxLoad != 3.5 || m.IdealLoad != 1.5 || m.PhysMem != 0 {
		t.Errorf("fallbacks = %+v", m)
	}
	e := &world.Node{}
	Apply(e, nil)
	if e.NCPUs != 1 || e.MaxLoad != 1 {
		t.Errorf("empty = %+v", e)
	}
}

func TestRequestBytes(t *testing.T) {
	// The scheduler's request of capture 72 (RPP payload).
	want := "+1+1+2+5ncpus+4arch+7physmem+7loadave+8max_load2+10ideal_load"
	if got := string(AppendRequest(nil, Lines)); got != want {
		t.Errorf("request %q, want %q", got, want)
	}
	if got := string(AppendClose(nil)); got != "+1+1+1" {
		t.Errorf("close %q", got)
	}
}

func TestReadReply(t *testing.T) {
	reply := "3+100+7ncpus=22+10arch=linux2+18physmem=24731708kb2+12loadave=0.212+16max_load=? 152012+18ideal_load=? 15201"
	got, err := ReadReply(dis.NewReader(strings.NewReader(reply)), 6)
	if err != nil || len(got) != 6 || got[3] != "loadave=0.21" || got[5] != "ideal_load=? 15201" {
		t.Errorf("ReadReply = %q, %v", got, err)
	}
	if _, err := ReadReply(dis.NewReader(strings.NewReader("3+999")), 1); err == nil {
		t.Error("error code accepted")
	}
	if _, err := ReadReply(dis.NewReader(strings.NewReader("3+100+7ncpus")), 2); err == nil {
		t.Error("short reply accepted")
	}
}

func TestTCPQuery(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := dis.NewReader(c)
		var req []string
		for i := 0; i < 3+len(Lines); i++ {
			if i < 3 {
				v, _ := r.Int()
				req = append(req, strconv.Itoa(v))
				continue
			}
			s, _ := r.Str()
			req = append(req, s)
		}
		c.Write([]byte("3+100+7ncpus=8+6arch=x2+11physmem=1gb2+12loadave=0.502+16max_load=? 152012+18ideal_load=? 15201"))
		got <- strings.Join(req, " ")
	}()
	q := NewTCP(ln.Addr().(*net.TCPAddr).Port)
	answers, err := q.Query(context.Background(), "127.0.0.1", Lines)
	if err != nil {
		t.Fatal(err)
	}
	if r := <-got; r != "1 1 2 ncpus arch physmem loadave max_load ideal_load" {
		t.Errorf("MOM received %q", r)
	}
	n := &world.Node{}
	Apply(n, answers)
	if n.NCPUs != 8 || n.PhysMem != 1<<30 || n.LoadAve != 0.5 {
		t.Errorf("node %+v", n)
	}
}

func TestApplySysTime(t *testing.T) {
	for answer, want := range map[string]float64{"systime=12.5": 12.5, "systime=40%": 40, "7": 7} {
		n := &world.Node{}
		if ApplySysTime(n, answer); !n.HasSysTime || n.SysTime != want {
			t.Errorf("%q: %+v", answer, n)
		}
	}
	for _, answer := range []string{"systime=? 15201", "systime=lots", "systime=101", "systime=-1", ""} {
		n := &world.Node{}
		if ApplySysTime(n, answer); n.HasSysTime {
			t.Errorf("%q accepted: %+v", answer, n)
		}
	}
}
