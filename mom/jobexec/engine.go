// This file holds the Engine: its options, the jobs it holds, its
// configuration and the queries of them (Status, Jobs, Sessions); a job's
// start is in start.go, its end in finish.go, what is reported about it
// in state.go.

package jobexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"gopbs/mom/cgroup"
	"gopbs/mom/config"
	"gopbs/mom/momlog"
	"gopbs/mom/procfs"
)

// Options configure an Engine.
type Options struct {
	Home    string         // PBS_HOME (contains mom_priv, spool, aux, undelivered)
	Host    string         // this MOM's host name ($mom_host or hostname)
	MomPort int            // PBS_MOMPORT value; default 15003
	Config  *config.Config // mom_priv/config; nil = defaults
	Log     *momlog.Logger // nil = discard
	Proc    procfs.FS      // zero value = /proc
	Lookup  LookupFunc     // nil = LookupUser
	// OnExit is called (from its own goroutine) once per job when it ends.
	OnExit func(Exit)

	// PollInterval overrides $check_poll_time (tests use short intervals):
	// the monitor polls this long after the previous poll, whatever
	// started that one (PollNow).
	PollInterval time.Duration
	// Now is the clock for walltime (default time.Now); tests pass a fake
	// one.
	Now func() time.Time
	// KillGrace is how long SIGKILL delivery waits after the preliminary
	// SIGTERM (default 5 s); KillCheck the re-check period (default 250 ms).
	KillGrace, KillCheck time.Duration
	// ResumeDelay is the pause between SIGCONT and SIGTERM for a suspended
	// job (default 1 s).
	ResumeDelay time.Duration
	// CopyRetryPause is the pause after the second failed copy attempt
	// (default 4 s).
	CopyRetryPause time.Duration
	// StarterPath is the executable run as job starter; default
	// os.Executable(). It must call RunStarterIfRequested.
	StarterPath string
	// Cgroups, when not nil, is where each job gets a cgroup of its own
	// (pbs_mom's $cgroup_root): its processes start in it, its usage is
	// read from it, its mem limit is its memory.max ($enforce mem auto
	// or cgroup) and what is left of it at the end is killed through it.
	Cgroups *cgroup.Root
	// OnLimitKill, if set, is called with the over-limit message
	// ("walltime 9 exceeded limit 5") when a job is killed for
	// exceeding a limit (the MOM's metrics count these).
	OnLimitKill func(msg string)
}

// Engine runs jobs. Create it with New; it is safe for concurrent use.
type Engine struct {
	opt  Options
	cfg  atomic.Pointer[config.Config]
	home string
	log  *momlog.Logger
	proc procfs.FS

	mu   sync.Mutex
	jobs map[string]*runningJob

	pollMu  sync.Mutex    // one poll cycle at a time
	pollNow chan struct{} // PollNow's request to the monitor

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

type runningJob struct {
	job    *Job
	cred   *Credentials
	vnodes []Vnode
	out    outputFiles
	limits limitSet

	inter         *interactiveSession // interactive jobs only
	nodefile      string
	tmpdir        string
	tmpdirCreated bool

	sid          int
	cmd          *exec.Cmd
	adopted      bool
	started      time.Time
	suspendedAt  time.Time
	suspendedFor time.Duration
	state        State
	usage        Usage
	overLimit    int // 0, 1 (OVERLMT1) or 2 (OVERLMT2)
	limitMsg     string
	limitKill    time.Time // when a poll first signalled the job for its limit
	rerun        bool
	finishing    bool
	noKill       bool
	cg           *cgroup.Group // the job's cgroup (enforce.go), nil without
	cgMemory     bool          // cg's memory.max is the job's mem limit
	cgStats      cgroup.Stats  // the last reading of cg
	ckpt         ckptState     // checkpoints (checkpoint.go)
	tasks        map[int]*task // tasks started through TM/IM (task.go)
	sister       bool          // joined as a sister node: no top task, no OnExit
	nodeID       int           // this host's node number in the job
	exit         *Exit
	done         chan struct{}
}

// New creates an Engine and starts its usage monitor. The PBS_HOME
// subdirectories it uses are created when missing.
func New(opt Options) (*Engine, error) {
	if opt.Home == "" {
		return nil, errors.New("jobexec: Options.Home is required")
	}
	if opt.Config == nil {
		opt.Config = config.Default()
	}
	if opt.Log == nil {
		opt.Log = momlog.Discard()
	}
	if opt.Proc.Root == "" {
		opt.Proc = procfs.Default
	}
	if opt.Lookup == nil {
		opt.Lookup = LookupUser
	}
	if opt.MomPort == 0 {
		opt.MomPort = 15003
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = opt.Config.CheckPollTime
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.KillGrace <= 0 {
		opt.KillGrace = 5 * time.Second
	}
	if opt.KillCheck <= 0 {
		opt.KillCheck = 250 * time.Millisecond
	}
	if opt.ResumeDelay <= 0 {
		opt.ResumeDelay = time.Second
	}
	if opt.CopyRetryPause <= 0 {
		opt.CopyRetryPause = 4 * time.Second
	}
	if opt.StarterPath == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("jobexec: locate starter executable: %w", err)
		}
		opt.StarterPath = exe
	}
	if opt.Host == "" {
		h, _ := os.Hostname()
		opt.Host = h
	}
	dirs := []struct {
		name string
		mode os.FileMode
	}{{"mom_priv", 0o751}, {"mom_priv/jobs", 0o751}, {"spool", 0o1777}, {"undelivered", 0o1777}, {"aux", 0o755}}
	for _, d := range dirs {
		p := filepath.Join(opt.Home, d.name)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return nil, fmt.Errorf("jobexec: %w", err)
			}
			if err := os.Chmod(p, d.mode); err != nil {
				return nil, fmt.Errorf("jobexec: %w", err)
			}
		}
	}
	e := &Engine{
		opt: opt, home: opt.Home, log: opt.Log, proc: opt.Proc,
		jobs: map[string]*runningJob{}, stop: make(chan struct{}), pollNow: make(chan struct{}, 1),
	}
	e.cfg.Store(opt.Config)
	e.wg.Add(1)
	go e.monitor()
	return e, nil
}

// conf returns the current configuration.
func (e *Engine) conf() *config.Config { return e.cfg.Load() }

// SetConfig replaces the configuration (SIGHUP, RM_CMD_CONFIG). Jobs
// already running keep the limits computed at their start; the poll
// interval fixed at New does not change.
func (e *Engine) SetConfig(cfg *config.Config) {
	if cfg != nil {
		e.cfg.Store(cfg)
	}
}

// Close stops the monitor. Running jobs are left running (like pbs_mom on
// SIGTERM); their Wait goroutines keep reporting exits.
func (e *Engine) Close() {
	e.stopOnce.Do(func() { close(e.stop) })
	e.wg.Wait()
}

// ScriptPath returns mom_priv/jobs/<prefix>.SC, where the protocol layer
// stores the JobScript chunks.
func (e *Engine) ScriptPath(prefix string) string {
	return filepath.Join(e.home, "mom_priv", "jobs", prefix+".SC")
}

// TaskFilePath returns mom_priv/jobs/<prefix>.TK.
func (e *Engine) TaskFilePath(prefix string) string {
	return filepath.Join(e.home, "mom_priv", "jobs", prefix+".TK")
}

// Status returns a snapshot of a job.
func (e *Engine) Status(jobID string) (Status, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.jobs[jobID]
	if !ok {
		return Status{}, ErrUnknownJob
	}
	return e.statusLocked(r), nil
}

func (e *Engine) statusLocked(r *runningJob) Status {
	u := r.usage
	if r.state == StateRunning || r.state == StateSuspended {
		u.Walltime = e.walltimeLocked(r, e.opt.Now())
	}
	st := Status{JobID: r.job.ID, SessionID: r.sid, State: r.state, Usage: u, Started: r.started,
		CheckpointName: r.ckpt.name, CheckpointTime: r.ckpt.at}
	if r.inter != nil {
		st.Terminal = r.inter.name
	}
	return st
}

// Jobs returns all jobs the engine holds, sorted by job id.
func (e *Engine) Jobs() []Status {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Status, 0, len(e.jobs))
	for _, r := range e.jobs {
		out = append(out, e.statusLocked(r))
	}
	sort.Slice(out, func(a, b int) bool { return out[a].JobID < out[b].JobID })
	return out
}

// Sessions returns the session ids of running jobs, the sessions of
// their tasks (multi-node jobs, task.go) included.
func (e *Engine) Sessions() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []int
	for _, r := range e.jobs {
		if r.state != StateExited {
			out = append(out, r.sessionsLocked()...)
		}
	}
	sort.Ints(out)
	return out
}
