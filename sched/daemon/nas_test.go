package daemon

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/sched/internal/fakeserver"
)

// nasHome writes a PBS home whose sched_priv holds the given files.
func nasHome(t *testing.T, files map[string]string) string {
	t.Helper()
	home := t.TempDir()
	priv := filepath.Join(home, "sched_priv")
	os.MkdirAll(priv, 0o755)
	os.MkdirAll(filepath.Join(home, "sched_logs"), 0o755)
	for name, text := range files {
		os.WriteFile(filepath.Join(priv, name), []byte(text), 0o644)
	}
	os.WriteFile(filepath.Join(home, "clients"), []byte("$restricted 127.0.0.1\n"), 0o644)
	return home
}

// newNASCluster starts a daemon on home, driven by a fake server.
func newNASCluster(t *testing.T, home string, opts Options) (*cluster, chan error) {
	t.Helper()
	opts.Home, opts.ConfigFile, opts.Stderr = home, filepath.Join(home, "clients"), io.Discard
	d, err := New(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuffer{b: &bytes.Buffer{}}
	d.Log = newBufLogger(buf, time.Now())
	if d.nas != nil {
		d.nas.Log = d.Log
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		d.Close()
	})
	return &cluster{t: t, d: d, srv: fakeserver.New("srv"), addr: ln.Addr().String(), log: buf}, done
}

const nasConfig = `# NAS scheduler
SUBMIT_QUEUE submit
BATCH_QUEUES small,large
SPECIAL_QUEUE special
`

func nasQueues(c *cluster) {
	c.queue("submit", batchreq.NewResourceAttr("resources_max", "walltime", "02:00:00"))
	c.queue("small", batchreq.NewResourceAttr("resources_max", "walltime", "00:10:00"))
	c.queue("large", batchreq.NewResourceAttr("resources_max", "walltime", "02:00:00"))
	c.queue("special")
}

func wall(w string) map[string]string { return map[string]string{"walltime": w} }

func TestNASPolicyChosenByConfigForm(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		opts   Options
		nas    bool
		errSub string
	}{
		{"FIFO sched_config", map[string]string{"sched_config": "by_queue: true\n"}, Options{}, false, ""},
		{"NAS sched_priv/config beside the FIFO sample", map[string]string{"sched_config": "by_queue: true\n", "config": nasConfig}, Options{}, true, ""},
		{"NAS form in sched_config", map[string]string{"sched_config": nasConfig}, Options{}, true, ""},
		{"config not in NAS form", map[string]string{"config": "$clienthost x\n"}, Options{}, false, ""},
		{"forced FIFO", map[string]string{"config": nasConfig}, Options{Policy: PolicyFIFO}, false, ""},
		{"forced NAS", map[string]string{"sched_config": nasConfig}, Options{Policy: PolicyNAS}, true, ""},
		{"forced NAS without a file", nil, Options{Policy: PolicyNAS}, false, "no configuration file"},
		{"PBSSCHED_CONFIG", map[string]string{"elsewhere": nasConfig}, Options{NASConfig: "elsewhere"}, true, ""},
		{"unknown policy", nil, Options{Policy: "lottery"}, false, "unknown policy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := nasHome(t, tt.files)
			opts := tt.opts
			if opts.NASConfig != "" {
				opts.NASConfig = filepath.Join(home, "sched_priv", opts.NASConfig)
			}
			opts.Home, opts.Stderr = home, io.Discard
			d, err := New(opts, nil)
			if tt.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("err %v, want ~%q", err, tt.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if (d.nas != nil) != tt.nas || (d.Sched != nil) == tt.nas || d.running == nil {
				t.Errorf("nas %v, fifo %v", d.nas != nil, d.Sched != nil)
			}
		})
	}
}

func TestNASSyntaxErrorsStopTheStart(t *testing.T) {
	home := nasHome(t, map[string]string{"config": nasConfig + "MAX_JOBS many\nBOGUS 1\n"})
	var stderr bytes.Buffer
	_, err := New(Options{Home: home, Stderr: &stderr}, nil)
	if !errors.Is(err, ErrNotStarted) {
		t.Fatalf("err %v", err)
	}
	logs, _ := filepath.Glob(filepath.Join(home, "sched_logs", "*"))
	var log []byte
	if len(logs) == 1 {
		log, _ = os.ReadFile(logs[0])
	}
	for _, want := range []string{`line 5: MAX_JOBS: "many": expected a non-negative decimal integer`, "line 6: BOGUS: unknown option"} {
		if !strings.Contains(string(log), want) || !strings.Contains(stderr.String(), want) {
			t.Errorf("%q not in log %q / stderr %q", want, log, stderr.String())
		}
	}
}

func TestNASSanityProblemsStopTheStart(t *testing.T) {
	home := nasHome(t, map[string]string{"config": "SUBMIT_QUEUE submit\nENFORCE_ALLOCATION true\n"})
	var stderr bytes.Buffer
	if _, err := New(Options{Home: home, Stderr: &stderr}, nil); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{"no BATCH_QUEUES are configured (suggestion: add a line 'BATCH_QUEUES",
		"ENFORCE_ALLOCATION needs SCHED_ACCT_DIR (suggestion: "} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("%q not in %q", want, stderr.String())
		}
	}
}

func TestNASCycleOverTheConnection(t *testing.T) {
	c, _ := newNASCluster(t, nasHome(t, map[string]string{"config": nasConfig}), Options{})
	nasQueues(c)
	c.nodes(1, 2)
	c.job("1.srv", "submit", "alice", wall("00:05:00"))
	c.job("2.srv", "submit", "bob", wall("01:00:00"))
	c.job("3.srv", "submit", "carol", wall("00:05:00"))
	c.job("4.srv", "submit", "dave", wall("05:00:00"))
	c.job("5.srv", "special", "erin", wall("00:05:00"))
	c.cycle(batchreq.SCH_SCHEDULE_NEW)
	if want := []string{"5.srv small", "1.srv small"}; !reflect.DeepEqual(c.srv.Moved, want) {
		t.Errorf("moved %q, want %q", c.srv.Moved, want)
	}
	if want := []string{"5.srv", "1.srv"}; !reflect.DeepEqual(c.srv.Started, want) {
		t.Errorf("started %q", c.srv.Started)
	}
	if !reflect.DeepEqual(c.srv.Deleted, []string{"4.srv"}) {
		t.Errorf("deleted %q", c.srv.Deleted)
	}
	if got := c.srv.Job("5.srv").Comment; !strings.HasPrefix(got, "Started on ") || !strings.HasSuffix(got, " (special access job)") {
		t.Errorf("special comment %q", got)
	}
	if got := c.srv.Job("2.srv").Comment; got != "Not Running: Not enough nodes available in the queues it fits" {
		t.Errorf("comment %q", got)
	}
}

func TestNASQueueSanityExits(t *testing.T) {
	c, done := newNASCluster(t, nasHome(t, map[string]string{"config": nasConfig}), Options{})
	c.queue("submit")
	c.queue("small")
	c.cycle(batchreq.SCH_SCHEDULE_FIRST)
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotStarted) {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("scheduler still serving after a failed queue sanity check")
	}
	for _, want := range []string{"Queue Sanity: BATCH_QUEUES queue large does not exist on the server (suggestion: create it",
		"Queue Sanity: SPECIAL_QUEUE queue special does not exist"} {
		if !strings.Contains(logText(c), want) {
			t.Errorf("%q not logged", want)
		}
	}
	if len(c.srv.Moved)+len(c.srv.Started) != 0 {
		t.Error("acted despite the problems")
	}
}

func TestNASHangupRereads(t *testing.T) {
	home := nasHome(t, map[string]string{"config": nasConfig})
	c, _ := newNASCluster(t, home, Options{})
	nasQueues(c)
	c.nodes(1, 4)
	c.cycle(batchreq.SCH_SCHEDULE_FIRST)
	os.WriteFile(filepath.Join(home, "sched_priv", "config"), []byte(nasConfig+"TEST_ONLY true\n"), 0o644)
	c.d.Hangup()
	if !c.d.nas.Config.TestOnly {
		t.Fatal("SIGHUP did not re-read the configuration")
	}
	c.d.nas.Log = c.d.Log
	c.job("1.srv", "submit", "alice", wall("00:05:00"))
	c.cycle(batchreq.SCH_SCHEDULE_NEW)
	if len(c.srv.Moved)+len(c.srv.Started) != 0 || c.srv.Job("1.srv").Comment != "" {
		t.Errorf("TEST_ONLY acted: moved %q started %q", c.srv.Moved, c.srv.Started)
	}
	if !strings.Contains(logText(c), "1.srv;TEST_ONLY: would move the job to queue small and run it") {
		t.Errorf("decision not logged:\n%s", logText(c))
	}
	// a broken file keeps the running configuration, SERVER_HOST trusted
	os.WriteFile(filepath.Join(home, "sched_priv", "config"), []byte(nasConfig+"SERVER_HOST 192.0.2.9\n"), 0o644)
	c.d.Hangup()
	os.WriteFile(filepath.Join(home, "sched_priv", "config"), []byte("SUBMIT_QUEUE\n"), 0o644)
	c.d.Hangup()
	if c.d.nas.Config.ServerHost != "192.0.2.9" || !strings.Contains(logText(c), "keeping the running configuration") {
		t.Error("a broken configuration replaced the running one")
	}
	if r := c.d.allowed(&net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 1000}); r != "" {
		t.Errorf("SERVER_HOST no longer trusted: %s", r)
	}
}

func TestNASServerHostTrusted(t *testing.T) {
	home := nasHome(t, map[string]string{"config": nasConfig + "SERVER_HOST 192.0.2.9\n"})
	d, err := New(Options{Home: home, Stderr: io.Discard}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if r := d.allowed(&net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 1000}); r != "" {
		t.Errorf("SERVER_HOST refused: %s", r)
	}
	if r := d.allowed(&net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 1000}); r != "unauthorized host" {
		t.Errorf("another host: %q", r)
	}
}

func TestIsLocalHost(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "192.0.2.1": false} {
		if got := isLocalHost(host); got != want {
			t.Errorf("%s: %v", host, got)
		}
	}
}

// linesMom records the lines it is asked and answers systime=<sys>.
type linesMom struct {
	mu    sync.Mutex
	lines [][]string
	sys   string
}

func (m *linesMom) Query(ctx context.Context, host string, lines []string) ([]string, error) {
	m.mu.Lock()
	m.lines = append(m.lines, lines)
	m.mu.Unlock()
	out := []string{"ncpus=2", "arch=linux", "physmem=1gb", "loadave=0", "max_load=2", "ideal_load=2"}
	if len(lines) > len(out) {
		out = append(out, "systime="+m.sys)
	}
	return out, nil
}

func TestNASAsksMomsForSystime(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		lines        int
		runs         bool
	}{
		{"FIFO", "", 6, true},
		{"NAS without HIGH_SYSTIME", nasConfig, 6, true},
		{"NAS with HIGH_SYSTIME", nasConfig + "HIGH_SYSTIME 30\n", 7, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newNASCluster(t, nasHome(t, map[string]string{"config": tt.config}), Options{})
			mom := &linesMom{sys: "45"}
			c.d.Mom = mom
			if c.d.Sched != nil {
				c.d.Sched.Log = c.d.Log
			}
			nasQueues(c)
			c.nodes(1, 2)
			c.job("1.srv", "submit", "alice", wall("00:05:00"))
			if tt.config == "" {
				c.job("2.srv", "small", "alice", wall("00:05:00"))
			}
			c.cycle(batchreq.SCH_SCHEDULE_NEW)
			if len(mom.lines) != 1 || len(mom.lines[0]) != tt.lines {
				t.Fatalf("MOM asked %q", mom.lines)
			}
			if tt.lines == 7 && mom.lines[0][6] != "systime" {
				t.Errorf("lines %q", mom.lines[0])
			}
			if ran := len(c.srv.Started) > 0; ran != tt.runs {
				t.Errorf("started %q", c.srv.Started)
			}
		})
	}
}
