package schedulers

import (
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
)

// fakeSchedEnv makes the test binary a scheduler that listens on the
// loopback port of its -S argument until it is killed (TestMain).
const fakeSchedEnv = "GOPBS_TEST_FAKE_SCHED"

func TestMain(m *testing.M) {
	if os.Getenv(fakeSchedEnv) != "" {
		fakeScheduler(os.Args[1:])
		return
	}
	os.Exit(m.Run())
}

// fakeScheduler listens on -S port and accepts connections, closing
// each, until the process is killed.
func fakeScheduler(args []string) {
	i := slices.Index(args, "-S")
	if i < 0 || i+1 >= len(args) {
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+args[i+1])
	if err != nil {
		os.Exit(1)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		c.Close()
	}
}

// failoverHost records Run with the host the server is to connect to.
type failoverHost struct {
	fakeHost
	hosts chan string
}

func (h *failoverHost) Run(s *Sched, cmd int) {
	h.fakeHost.Run(s, cmd)
	h.hosts <- s.Host
}

// TestSupervisorFailover: the seed's failover rules for a scheduler
// whose host is a failover peer's (seed 003, interface 4). A secondary
// server that can reach it connects to it there; one that cannot starts
// it here and makes its host its own; the primary always stops the
// peer's scheduler (SCH_QUIT) and starts it here.
func TestSupervisorFailover(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeSchedEnv, "1")
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		self      string
		primary   bool
		reachable bool
		wantHost  string // where the server connects
		wantQuit  bool
	}{
		{"secondary, peer's scheduler reachable", "head2", false, true, "head1", false},
		{"secondary, peer's scheduler gone", "head2", false, false, "head2", false},
		{"primary takes it back", "head2", true, true, "head2", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			priv := filepath.Join(home, "sched_priv_s1")
			if err := os.MkdirAll(priv, 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(priv, "sched_config"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			tab := NewTable(Env{Home: home, Host: "pair", User: me.Username, DefaultPort: 15004})
			ch := tab.Manage(&batchreq.Manage{Command: batchreq.MGR_CMD_CREATE, ObjType: batchreq.MGR_OBJ_SCHED, ObjName: "s1",
				Attrs: batchreq.AttrList{batchreq.NewAttr("host", "head1"), batchreq.NewAttr("port", strconv.Itoa(port)),
					batchreq.NewAttr("partitions", "p1"), batchreq.NewAttr("scheduling", "true")}}, nil)
			if ch.Reply != nil {
				t.Fatalf("create: %+v", ch.Reply)
			}
			var mu sync.Mutex
			var quits []string
			h := &failoverHost{fakeHost: *newFakeHost(), hosts: make(chan string, 10)}
			sv := NewSupervisor(tab, h, RunConfig{Command: exe, Home: home, Tick: 20 * time.Millisecond,
				Local: func(host string) bool { return host == tc.self },
				Self:  tc.self, Peers: []string{"head1", "head3"}, Primary: tc.primary,
				Reach: func(host string, p int) bool { return host == "head1" && p == port && tc.reachable },
				Quit: func(host string, p int) {
					mu.Lock()
					quits = append(quits, host+":"+strconv.Itoa(p))
					mu.Unlock()
				}})
			sv.Start()
			defer sv.Stop(true)
			select {
			case got := <-h.hosts:
				if got != tc.wantHost {
					t.Errorf("the server connects to s1 on %q, want %q", got, tc.wantHost)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("s1 never handed to the link")
			}
			if got := tab.Get("s1").Host; got != tc.wantHost {
				t.Errorf("s1's host %q, want %q", got, tc.wantHost)
			}
			if started := tc.wantHost == tc.self; started != portOpen(port) {
				t.Errorf("a scheduler listens here: %v, want %v", portOpen(port), started)
			}
			mu.Lock()
			defer mu.Unlock()
			if want := []string{"head1:" + strconv.Itoa(port)}; tc.wantQuit != slices.Equal(quits, want) || !tc.wantQuit && len(quits) > 0 {
				t.Errorf("SCH_QUIT sent to %v (want it: %v)", quits, tc.wantQuit)
			}
		})
	}
}
