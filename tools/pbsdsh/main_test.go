package main

import (
	"bytes"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/dis"
	"gopbs/momproto"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
		want options
	}{
		{[]string{"hostname"}, true, options{node: -1, argv: []string{"hostname"}}},
		{[]string{"-c", "3", "-v", "echo", "-n", "x"}, true, options{copies: 3, node: -1, verbose: true, argv: []string{"echo", "-n", "x"}}},
		{[]string{"-n", "1", "-s", "-u", "-o", "date"}, true, options{node: 1, serial: true, unique: true, argv: []string{"date"}}},
		{[]string{"-c", "0", "date"}, false, options{}},
		{[]string{"-c", "2", "-n", "1", "date"}, false, options{}},
		{[]string{"-n", "x", "date"}, false, options{}},
		{[]string{"-v"}, false, options{}},
		{[]string{"-z", "date"}, false, options{}},
	} {
		var stderr bytes.Buffer
		o, ok := parseArgs(tc.args, &stderr)
		if ok != tc.ok {
			t.Errorf("%q: ok %v, want %v (%s)", tc.args, ok, tc.ok, stderr.String())
			continue
		}
		if ok && (o.copies != tc.want.copies || o.node != tc.want.node || o.serial != tc.want.serial ||
			o.unique != tc.want.unique || o.verbose != tc.want.verbose || !slices.Equal(o.argv, tc.want.argv)) {
			t.Errorf("%q: %+v, want %+v", tc.args, *o, tc.want)
		}
	}
}

func TestTargets(t *testing.T) {
	nodes := []int{0, 1, 2, 3}
	hosts := []string{"a", "a", "b", "c"}
	for _, tc := range []struct {
		o    options
		want []int
	}{
		{options{node: -1}, []int{0, 1, 2, 3}},
		{options{node: 2}, []int{2}},
		{options{node: -1, copies: 6}, []int{0, 1, 2, 3, 0, 1}},
		{options{node: -1, unique: true}, []int{0, 2, 3}},
	} {
		if got := tc.o.targets(nodes, hosts); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.o, got, tc.want)
		}
	}
}

// fakeMom answers TM requests on a loopback listener as a MOM would for
// a job of two virtual nodes: tasks get ids from 2 on; an obit is
// answered with exit status 0, after a short delay.
type fakeMom struct {
	ln   net.Listener
	mu   sync.Mutex
	reqs []*momproto.TMRequest
}

func newFakeMom(t *testing.T) *fakeMom {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f := &fakeMom{ln: ln}
	go f.serve()
	return f
}

func (f *fakeMom) port() string { return strconv.Itoa(f.ln.Addr().(*net.TCPAddr).Port) }

func (f *fakeMom) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.conn(c)
	}
}

func (f *fakeMom) conn(c net.Conn) {
	defer c.Close()
	var wmu sync.Mutex
	reply := func(r *momproto.TMReply) {
		wmu.Lock()
		defer wmu.Unlock()
		c.Write(r.Append(nil))
	}
	var buf []byte
	tmp := make([]byte, 4096)
	next := 2
	for {
		n, err := c.Read(tmp)
		buf = append(buf, tmp[:n]...)
		for len(buf) > 0 {
			req, used, derr := momproto.DecodeTMRequest(buf)
			if derr != nil {
				if errors.Is(derr, dis.ErrEOF) || errors.Is(derr, dis.ErrEOD) {
					break
				}
				return
			}
			buf = buf[used:]
			f.mu.Lock()
			f.reqs = append(f.reqs, req)
			f.mu.Unlock()
			ok := func(b momproto.Body) *momproto.TMReply {
				return &momproto.TMReply{Version: 1, Code: momproto.TM_OKAY, Event: req.Event, Body: b}
			}
			switch req.Command {
			case momproto.TM_INIT:
				reply(ok(&momproto.TMInitReply{Nodes: []int{0, 1}, JobID: req.JobID, Parent: -1}))
			case momproto.TM_SPAWN:
				reply(ok(&momproto.Ints{Values: []int{next}}))
				next++
			case momproto.TM_OBIT:
				go func() {
					time.Sleep(20 * time.Millisecond)
					reply(ok(&momproto.Ints{Values: []int{0}}))
				}()
			}
		}
		if err != nil {
			return
		}
	}
}

// TestRunAgainstFakeMom: pbsdsh initialises, spawns one task per virtual
// node and waits for each one's obit, with the job's id, cookie and task.
func TestRunAgainstFakeMom(t *testing.T) {
	f := newFakeMom(t)
	env := map[string]string{"PBS_JOBID": "41.vm", "PBS_JOBCOOKIE": "0D86E11CE0191DC7CB7BD159ABA22740",
		"PBS_TASKNUM": "1", "PBS_MOMPORT": f.port(), "PBS_MOMHOST": "127.0.0.1"}
	var stderr bytes.Buffer
	if rc := run([]string{"-v", "hostname"}, func(k string) string { return env[k] }, &stderr); rc != 0 {
		t.Fatalf("exit %d: %s", rc, stderr.String())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var got []string
	for _, r := range f.reqs {
		if r.JobID != "41.vm" || r.Cookie != env["PBS_JOBCOOKIE"] || r.FromTask != 1 {
			t.Errorf("request header %+v", r)
		}
		s := momproto.TMCommandName(r.Command)
		switch b := r.Body.(type) {
		case *momproto.TMSpawn:
			s += " " + strconv.Itoa(b.Node) + " " + strings.Join(b.Argv, " ")
		case *momproto.Ints:
			s += " " + intsString(b.Values)
		}
		got = append(got, s)
	}
	want := []string{"TM_INIT", "TM_SPAWN 0 hostname", "TM_SPAWN 1 hostname", "TM_OBIT 0 2", "TM_OBIT 1 3"}
	if !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
	if !strings.Contains(stderr.String(), "task 3 on node 1 exit status 0") {
		t.Errorf("verbose output: %s", stderr.String())
	}
	// Without the job's environment pbsdsh fails as TORQUE's does.
	if rc := run([]string{"hostname"}, func(string) string { return "" }, &stderr); rc == 0 {
		t.Error("ran without PBS_JOBID")
	}
}

func intsString(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}
