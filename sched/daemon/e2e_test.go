package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/sched/internal/fakeserver"
	"gopbs/sched/policy"
)

// cluster is a scheduler daemon serving on a loopback port, driven by a
// fake server.
type cluster struct {
	t    testing.TB
	d    *Daemon
	srv  *fakeserver.Server
	addr string
	log  *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// newCluster starts a daemon with sched_config text and extra sched_priv
// files, trusting 127.0.0.1 from ordinary ports ($restricted).
func newCluster(t testing.TB, schedConfig string, files map[string]string) *cluster {
	t.Helper()
	home := t.TempDir()
	priv := filepath.Join(home, "sched_priv")
	os.MkdirAll(priv, 0o755)
	os.MkdirAll(filepath.Join(home, "sched_logs"), 0o755)
	os.WriteFile(filepath.Join(priv, "sched_config"), []byte(schedConfig), 0o644)
	for name, text := range files {
		os.WriteFile(filepath.Join(priv, name), []byte(text), 0o644)
	}
	clients := filepath.Join(home, "clients")
	os.WriteFile(clients, []byte("$restricted 127.0.0.1\n"), 0o644)
	d, err := New(Options{Home: home, ConfigFile: clients, Stderr: io.Discard}, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{b: &bytes.Buffer{}}
	d.Log = newBufLogger(buf, time.Now())
	d.Sched.Log = d.Log
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		<-done
		d.Close()
	})
	srv := fakeserver.New("srv")
	return &cluster{t: t, d: d, srv: srv, addr: ln.Addr().String(), log: buf}
}

func (c *cluster) cycle(cmd int) {
	c.t.Helper()
	if err := c.srv.Trigger(c.addr, cmd); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) nodes(n, np int) {
	for i := 0; i < n; i++ {
		c.srv.Nodes = append(c.srv.Nodes, &fakeserver.Node{Name: "node" + string(rune('1'+i)), NP: np})
	}
}

func (c *cluster) queue(name string, attrs ...batchreq.Attr) {
	c.srv.Queues = append(c.srv.Queues, &fakeserver.Queue{Name: name, Attrs: attrs})
}

func (c *cluster) job(id, queue, user string, res map[string]string, opts ...func(*fakeserver.Job)) {
	if res == nil {
		res = map[string]string{}
	}
	if _, ok := res["nodes"]; !ok {
		res["nodes"] = "1"
	}
	j := &fakeserver.Job{ID: id, Queue: queue, User: user, Resources: res, QTime: time.Now().Add(-time.Minute)}
	for _, o := range opts {
		o(j)
	}
	c.srv.AddJob(j)
}

// drain runs cycles, finishing every started job after each, until no job
// starts; it returns the start order.
func (c *cluster) drain(first int) []string {
	cmd := first
	for i := 0; i < 50; i++ {
		before := len(c.srv.Started)
		c.cycle(cmd)
		if len(c.srv.Started) == before {
			break
		}
		for _, id := range c.srv.Started[before:] {
			c.srv.Finish(id)
		}
		cmd = batchreq.SCH_SCHEDULE_TERM
	}
	return c.srv.Started
}

func prioOpt(p int) func(*fakeserver.Job) { return func(j *fakeserver.Job) { j.Priority = p } }

func TestEndToEndPolicies(t *testing.T) {
	tests := []struct {
		name   string
		config string
		files  map[string]string
		setup  func(c *cluster)
		want   []string
	}{
		{
			name:   "FIFO: submission order",
			config: "",
			setup: func(c *cluster) {
				c.nodes(1, 1)
				c.queue("batch")
				c.job("1.srv", "batch", "alice", map[string]string{"cput": "00:10:00"})
				c.job("2.srv", "batch", "bob", map[string]string{"cput": "00:01:00"})
				c.job("3.srv", "batch", "alice", nil)
			},
			want: []string{"1.srv", "2.srv", "3.srv"},
		},
		{
			name:   "shipped config: shortest job first within queue",
			config: "by_queue: true\nsort_by: shortest_job_first\n",
			setup: func(c *cluster) {
				c.nodes(1, 1)
				c.queue("batch")
				c.job("1.srv", "batch", "alice", map[string]string{"cput": "00:10:00"})
				c.job("2.srv", "batch", "bob", map[string]string{"cput": "00:01:00"})
				c.job("3.srv", "batch", "alice", map[string]string{"cput": "00:05:00"})
			},
			want: []string{"2.srv", "3.srv", "1.srv"},
		},
		{
			name:   "by_queue with sort_queues: queue Priority first",
			config: "by_queue: true\nsort_queues: true\n",
			setup: func(c *cluster) {
				c.nodes(1, 1)
				c.queue("low", batchreq.NewAttr("Priority", "1"))
				c.queue("high", batchreq.NewAttr("Priority", "50"))
				c.job("1.srv", "low", "alice", nil)
				c.job("2.srv", "high", "alice", nil)
				c.job("3.srv", "low", "alice", nil)
				c.job("4.srv", "high", "alice", nil)
			},
			want: []string{"2.srv", "4.srv", "1.srv", "3.srv"},
		},
		{
			name:   "round_robin: one job per queue in turn",
			config: "round_robin: true\n",
			setup: func(c *cluster) {
				c.nodes(2, 1)
				c.queue("a")
				c.queue("b")
				c.job("a1.srv", "a", "alice", nil)
				c.job("a2.srv", "a", "alice", nil)
				c.job("a3.srv", "a", "alice", nil)
				c.job("b1.srv", "b", "bob", nil)
				c.job("b2.srv", "b", "bob", nil)
			},
			want: []string{"a1.srv", "b1.srv", "a2.srv", "b2.srv", "a3.srv"},
		},
		{
			name:   "strict_fifo: a blocked job holds back its queue",
			config: "strict_fifo: true\nby_queue: true\n",
			setup: func(c *cluster) {
				c.nodes(2, 1)
				c.srv.Nodes[1].State = "down"
				c.queue("a")
				c.queue("b")
				c.job("1.srv", "a", "alice", map[string]string{"nodes": "2"})
				c.job("2.srv", "a", "alice", nil)
				c.job("3.srv", "b", "alice", nil)
			},
			want: []string{"3.srv"},
		},
		{
			name:   "fair_share: least usage per share first",
			config: "fair_share: true\nunknown_shares: 10\n",
			files: map[string]string{
				"resource_group": "grpa 1 root 50\ngrpb 2 root 50\nann 10 grpa 1\nbob 11 grpb 1\n",
				"usage":          "ann 5000\n",
			},
			setup: func(c *cluster) {
				c.nodes(4, 1)
				c.queue("batch")
				c.job("1.srv", "batch", "ann", map[string]string{"cput": "01:00:00"})
				c.job("2.srv", "batch", "ann", map[string]string{"cput": "01:00:00"})
				c.job("3.srv", "batch", "bob", map[string]string{"cput": "01:00:00"})
				c.job("4.srv", "batch", "bob", map[string]string{"cput": "01:00:00"})
			},
			// bob has no usage: his two jobs (7200 s charged) come first,
			// then ann (5000 s) is the more deserving.
			want: []string{"3.srv", "4.srv", "1.srv", "2.srv"},
		},
		{
			name:   "help_starving_jobs: the starving job runs first",
			config: "help_starving_jobs: true\nmax_starve: 01:00:00\n",
			setup: func(c *cluster) {
				c.nodes(1, 1)
				c.queue("batch")
				c.job("1.srv", "batch", "alice", nil)
				c.job("2.srv", "batch", "bob", nil, func(j *fakeserver.Job) { j.QTime = time.Now().Add(-2 * time.Hour) })
			},
			want: []string{"2.srv", "1.srv"},
		},
		{
			name:   "high_priority_first",
			config: "sort_by: high_priority_first\n",
			setup: func(c *cluster) {
				c.nodes(1, 1)
				c.queue("batch")
				c.job("1.srv", "batch", "alice", nil, prioOpt(1))
				c.job("2.srv", "batch", "alice", nil, prioOpt(100))
				c.job("3.srv", "batch", "alice", nil, prioOpt(10))
			},
			want: []string{"2.srv", "3.srv", "1.srv"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t, tt.config, tt.files)
			tt.setup(c)
			got := c.drain(batchreq.SCH_SCHEDULE_NEW)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("start order %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEndToEndStrictFIFOComments(t *testing.T) {
	c := newCluster(t, "strict_fifo: true\n", nil)
	c.nodes(2, 1)
	c.srv.Nodes[1].State = "down"
	c.queue("batch")
	c.job("1.srv", "batch", "alice", map[string]string{"nodes": "2"})
	c.job("2.srv", "batch", "alice", nil)
	c.cycle(batchreq.SCH_SCHEDULE_NEW)
	if got := c.srv.Job("1.srv").Comment; got != policy.CommentNodes {
		t.Errorf("1.srv comment %q", got)
	}
	if got := c.srv.Job("2.srv").Comment; got != "Not Running: Strict fifo order" {
		t.Errorf("2.srv comment %q", got)
	}
}

func TestEndToEndRunLimit(t *testing.T) {
	c := newCluster(t, "", nil)
	c.nodes(4, 1)
	c.srv.Attrs = batchreq.AttrList{batchreq.NewAttr("max_user_run", "1")}
	c.queue("batch", batchreq.NewAttr("max_running", "2"))
	c.job("1.srv", "batch", "alice", nil)
	c.job("2.srv", "batch", "alice", nil)
	c.job("3.srv", "batch", "bob", nil)
	c.job("4.srv", "batch", "carol", nil)
	c.cycle(batchreq.SCH_SCHEDULE_NEW)
	if want := []string{"1.srv", "3.srv"}; !reflect.DeepEqual(c.srv.Started, want) {
		t.Errorf("started %v, want %v", c.srv.Started, want)
	}
	if got := c.srv.Job("2.srv").Comment; got != "Not Running: User has reached server running job limit." {
		t.Errorf("2.srv comment %q", got)
	}
	if got := c.srv.Job("4.srv").Comment; got != "Not Running: Queue job limit has been reached." {
		t.Errorf("4.srv comment %q", got)
	}
	if got := c.srv.Job("1.srv").Comment; !strings.HasPrefix(got, "Job started on ") {
		t.Errorf("1.srv comment %q", got)
	}
	// Comments are not re-sent when unchanged: the next cycle sends no
	// ModifyJob (type 11).
	c.srv.Requests = nil
	c.cycle(batchreq.SCH_SCHEDULE_TIME)
	for _, r := range c.srv.Requests {
		if r == "11" {
			t.Errorf("unchanged comment sent again: %v", c.srv.Requests)
		}
	}
	if !strings.Contains(logText(c), ";0040; pbs_sched;Job;1.srv;Job Run\n") {
		t.Errorf("log:\n%s", logText(c))
	}
}

func TestEndToEndCannotRunComment(t *testing.T) {
	c := newCluster(t, "", nil)
	c.nodes(1, 2)
	c.queue("batch")
	c.job("1.srv", "batch", "alice", map[string]string{"nodes": "1:ppn=2"})
	c.job("2.srv", "batch", "alice", nil)
	c.job("3.srv", "batch", "alice", map[string]string{"nodes": "1:ppn=4"})
	c.cycle(batchreq.SCH_SCHEDULE_NEW)
	if got := c.srv.Job("2.srv").Comment; got != "Not Running: Not enough of the right type of nodes are available" {
		t.Errorf("comment %q", got)
	}
	if !reflect.DeepEqual(c.srv.Deleted, []string{"3.srv"}) {
		t.Errorf("deleted %v (a job that can never run is deleted)", c.srv.Deleted)
	}
}

func TestCommandsAndTrust(t *testing.T) {
	c := newCluster(t, "", nil)
	c.nodes(1, 1)
	c.queue("batch")
	c.job("1.srv", "batch", "alice", nil)
	// RECYC and NULL do nothing: no request is sent.
	for _, cmd := range []int{batchreq.SCH_SCHEDULE_RECYC, batchreq.SCH_SCHEDULE_NULL, batchreq.SCH_RULESET} {
		c.cycle(cmd)
	}
	if len(c.srv.Requests) != 0 {
		t.Errorf("requests after RECYC/NULL: %v", c.srv.Requests)
	}
	// CONFIGURE re-reads sched_config.
	os.WriteFile(c.d.PrivPath("sched_config"), []byte("strict_fifo: true\n"), 0o644)
	c.cycle(batchreq.SCH_CONFIGURE)
	if !c.d.Policy().Config.StrictFIFO[0] {
		t.Error("CONFIGURE did not re-read sched_config")
	}
	// Without $restricted an ordinary port is refused.
	c.d.mu.Lock()
	c.d.restricted = nil
	c.d.mu.Unlock()
	conn, err := net.Dial("tcp", c.addr)
	if err != nil {
		t.Fatal(err)
	}
	batchreq.WriteSchedCommand(conn, batchreq.SCH_SCHEDULE_NEW)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := conn.Read(make([]byte, 10)); n != 0 || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		t.Errorf("refused connection read %d, %v", n, err)
	}
	conn.Close()
	if !waitLog(c, "non-reserved port", 5*time.Second) {
		t.Errorf("no refusal logged:\n%s", logText(c))
	}
	// QUIT ends Serve.
	c.d.mu.Lock()
	c.d.restricted = []string{"127.0.0.1"}
	c.d.mu.Unlock()
	c.cycle(batchreq.SCH_QUIT)
}

// waitLog waits until the scheduler's log holds text, for at most limit,
// and reports whether it does.
func waitLog(c *cluster, text string, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); !strings.Contains(logText(c), text); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

func logText(c *cluster) string {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	return c.log.b.String()
}

// TestAlarm: a cycle whose server never answers gives up when the alarm
// rings. The alarm bounds the cycle, not the wait for the command: a
// command that arrives later than the alarm after the connection (as
// under load, between the server's connect and its write) still starts a
// cycle, and it is the cycle that takes too long.
func TestAlarm(t *testing.T) {
	const alarm = 50 * time.Millisecond
	for _, delay := range []time.Duration{0, 2 * alarm} {
		t.Run(delay.String(), func(t *testing.T) {
			c := newCluster(t, "", nil)
			c.d.mu.Lock()
			c.d.opts.Alarm = alarm
			c.d.mu.Unlock()
			conn, err := net.Dial("tcp", c.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			time.Sleep(delay) // the command comes late: time must pass, nothing waits on it
			batchreq.WriteSchedCommand(conn, batchreq.SCH_SCHEDULE_NEW)
			// Never answer the StatusServer request: the cycle must give up.
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			io.Copy(io.Discard, conn)
			if !waitLog(c, "scheduling iteration took too long", 5*time.Second) {
				t.Errorf("log:\n%s", logText(c))
			}
		})
	}
}

// TestEndToEndFullClusterRequests checks what a cycle over a full cluster
// costs on the wire: one refused RunJob (or node query) per node
// specification, then nothing for the other waiting jobs.
func TestEndToEndFullClusterRequests(t *testing.T) {
	c := newCluster(t, "", nil)
	c.nodes(2, 2)
	c.queue("batch")
	for i := 0; i < 10; i++ { // no nodes request: the server gives one VP
		c.srv.AddJob(&fakeserver.Job{ID: fmt.Sprintf("%d.srv", i), Queue: "batch", User: "u", Resources: map[string]string{}})
	}
	for i := 10; i < 14; i++ {
		c.job(fmt.Sprintf("%d.srv", i), "batch", "u", map[string]string{"nodes": "1:ppn=2"})
	}
	cycle := func(cmd int) string {
		t.Helper()
		c.srv.Requests = nil
		c.cycle(cmd)
		return strings.Join(c.srv.Requests, ",")
	}
	const status = "21,58,20,51,"
	// 0–3 start; 4 is refused; 10 gets the node query; the rest only
	// their comments.
	if got, want := cycle(batchreq.SCH_SCHEDULE_NEW), status+
		"11,15,11,15,11,15,11,15,"+"11,15,11,"+"11,11,11,11,11,"+"24,11,11,11,11"; got != want {
		t.Errorf("first cycle requests\n%s\nwant\n%s", got, want)
	}
	for id, want := range map[string]string{"5.srv": policy.CommentNodes, "9.srv": policy.CommentNodes,
		"11.srv": policy.CommentNodes, "4.srv": policy.CommentRunFailedPrefix} {
		if got := c.srv.Job(id).Comment; !strings.HasPrefix(got, want) {
			t.Errorf("%s comment %q", id, got)
		}
	}
	// Steady state: the refused job again, one node query.
	if got, want := cycle(batchreq.SCH_SCHEDULE_TIME), status+"11,15,11,24"; got != want {
		t.Errorf("full cluster requests %s, want %s", got, want)
	}
	// A job ends: 4 starts, 5 is the one refused.
	c.srv.Finish("0.srv")
	if got, want := cycle(batchreq.SCH_SCHEDULE_TERM), status+"11,15,"+"11,15,11,"+"24"; got != want {
		t.Errorf("after a job ended: requests %s, want %s", got, want)
	}
	// As TORQUE: every waiting job is asked about.
	c.d.mu.Lock()
	c.d.Sched.NoPrefilter = true
	c.d.mu.Unlock()
	if got := cycle(batchreq.SCH_SCHEDULE_TIME); strings.Count(got, "15") != 5 || strings.Count(got, "24") != 4 {
		t.Errorf("NoPrefilter requests %s", got)
	}
}
