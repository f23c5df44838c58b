package jobexec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/cgroup"
	"gopbs/mom/checkpoint"
	"gopbs/mom/config"
	"gopbs/mom/momlog"
	"gopbs/mom/procfs"
	"gopbs/mom/resc"
)

// Errors returned by Engine methods; the protocol layer maps them to PBSE
// codes (PBSE_UNKJOBID, PBSE_JOBEXIST, PBSE_BADSTATE, PBSE_UNKSIG).
var (
	ErrUnknownJob    = errors.New("unknown job")
	ErrJobExists     = errors.New("job is running")
	ErrBadState      = errors.New("job is not in a state allowing this request")
	ErrUnknownSignal = errors.New("unknown signal")
)

// State is the execution state of a job in the engine.
type State int

// Job states.
const (
	StateStarting  State = iota // prologues / starter running
	StateRunning                // processes running (substate RUNNING 42)
	StateSuspended              // stopped by "suspend" (substate SUSPEND 43)
	StateExited                 // ended; Exit available
)

func (s State) String() string {
	switch s {
	case StateStarting:
		return "starting"
	case StateRunning:
		return "running"
	case StateSuspended:
		return "suspended"
	}
	return "exited"
}

// Usage is a job's resources_used.
type Usage struct {
	CPUTime  int64  // seconds (× $cputmult)
	Mem      uint64 // bytes, high-water mark of Σ rss
	VMem     uint64 // bytes, high-water mark of Σ vsize
	Walltime int64  // seconds (× $wallmult), suspended time excluded
}

// Resources returns the four resources_used entries in TORQUE's order and
// text form: cput HH:MM:SS, mem <n>kb, vmem <n>kb, walltime HH:MM:SS.
func (u Usage) Resources() []Resource {
	return []Resource{
		{"cput", resc.FormatHMS(u.CPUTime)},
		{"mem", resc.FormatKB(u.Mem)},
		{"vmem", resc.FormatKB(u.VMem)},
		{"walltime", resc.FormatHMS(u.Walltime)},
	}
}

// String returns "cput=…,mem=…,vmem=…,walltime=…" (epilogue argument 7).
func (u Usage) String() string {
	rs := u.Resources()
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Name + "=" + r.Value
	}
	return strings.Join(parts, ",")
}

// Exit reports the end of a job (OnExit). Every job given to Start or Adopt
// produces exactly one Exit.
type Exit struct {
	JobID     string
	SessionID int // 0 if the job never got a session
	Status    int // exit_status for the obit (spec 11 §10)
	Usage     Usage
	// StartFailed is set when the job failed before its shell ran; Status is
	// then one of the negative JOB_EXEC_* codes.
	StartFailed bool
	Message     string // reason for start failures and limit kills
	// CheckpointName is the job's last checkpoint (taken in this run or
	// restarted from), "" if none; CheckpointTime when it was taken.
	CheckpointName string
	CheckpointTime time.Time
}

// Status is a snapshot of one job.
type Status struct {
	JobID     string
	SessionID int
	State     State
	Usage     Usage
	Started   time.Time
	// Terminal is the pseudo-terminal of an interactive job (reported once
	// as Output_Path/Error_Path), "" for batch jobs.
	Terminal string
	// CheckpointName and CheckpointTime are as in Exit.
	CheckpointName string
	CheckpointTime time.Time
}

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

// Start runs a job (the Commit step). It returns the session id once the
// job's shell has been started. If the start fails it returns a *StartError
// carrying the negative exit status; OnExit is still called for the job, so
// the caller sends the obit from OnExit in every case.
func (e *Engine) Start(ctx context.Context, spec *Job) (int, error) {
	j := *spec
	e.mu.Lock()
	if old, ok := e.jobs[j.ID]; ok && old.state != StateExited {
		e.mu.Unlock()
		return 0, ErrJobExists
	}
	r := &runningJob{job: &j, state: StateStarting, done: make(chan struct{})}
	e.jobs[j.ID] = r
	e.mu.Unlock()

	sid, status, err := e.start(ctx, r)
	if err != nil {
		if r.inter != nil {
			r.inter.close()
		}
		e.finish(r, status, 0, err.Error(), true)
		return 0, &StartError{Status: status, Msg: err.Error()}
	}
	return sid, nil
}

// start performs the start steps; on failure it returns the JOB_EXEC status.
func (e *Engine) start(ctx context.Context, r *runningJob) (int, int, error) {
	j := r.job
	if j.Interactive && j.InteractivePort <= 0 {
		return 0, JOB_EXEC_FAIL1, errors.New("interactive job without qsub port")
	}
	if j.Prefix == "" {
		j.Prefix = j.ID
	}
	var cred *Credentials
	var err error
	for i := 0; i <= e.conf().ExtPwdRetry; i++ {
		if cred, err = e.opt.Lookup(j.User, j.Group); err == nil {
			break
		}
	}
	if err != nil {
		return 0, JOB_EXEC_FAIL1, fmt.Errorf("no password entry for user %s: %w", j.User, err)
	}
	r.cred = cred
	if r.vnodes, err = ParseExecHost(j.ExecHost); err != nil {
		return 0, JOB_EXEC_FAIL1, err
	}
	hosts := map[string]bool{}
	for _, v := range r.vnodes {
		hosts[v.Host] = true
	}
	if r.limits, err = e.computeLimits(j, len(hosts)); err != nil {
		return 0, JOB_EXEC_FAIL1, err
	}
	if r.ckpt.opts, err = checkpoint.ParseOptions(j.Checkpoint); err != nil {
		e.log.Job(logline.EventJob, j.ID, err.Error()+": checkpoints as for Checkpoint=u")
		r.ckpt.opts = checkpoint.Options{Depth: 1}
	}
	if j.Cookie == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		j.Cookie = strings.ToUpper(hex.EncodeToString(b[:]))
	}
	if _, ok := j.Resource("neednodes"); ok {
		if err := e.writeNodefile(r); err != nil {
			return 0, JOB_EXEC_FAIL1, err
		}
	}
	if e.conf().TmpDir != "" {
		if err := e.makeTmpdir(r); err != nil {
			return 0, JOB_EXEC_FAIL1, err
		}
	}
	script := e.ScriptPath(j.Prefix)
	if j.InteractivePort <= 0 {
		if _, err := os.Stat(script); err != nil {
			return 0, JOB_EXEC_FAIL1, fmt.Errorf("job script: %w", err)
		}
		_ = os.Chown(script, int(cred.UID), int(cred.GID))
	}

	var stdout, stderr *os.File
	if j.InteractivePort > 0 {
		is, err := e.openInteractive(ctx, r)
		if err != nil {
			return 0, JOB_EXEC_FAIL1, err
		}
		r.inter = is
		r.out = outputFiles{outPath: is.name, errPath: is.name, joined: 'o'}
		stdout, stderr = is.slave, is.slave
	} else {
		r.out = e.planOutput(j, cred)
		if stdout, stderr, err = e.openOutputs(r); err != nil {
			return 0, JOB_EXEC_STDOUTFAIL, err
		}
		defer stdout.Close()
		defer stderr.Close()
	}

	if rc := e.runPrologues(ctx, r, stdout, stderr); rc != 0 {
		if rc == 1 {
			return 0, JOB_EXEC_FAIL2, fmt.Errorf("prologue failed (%d)", rc)
		}
		return 0, JOB_EXEC_RETRY, fmt.Errorf("prologue failed (%d)", rc)
	}

	shell := e.selectShell(j, cred)
	argv0 := path.Base(shell)
	if e.conf().SourceLoginBatch {
		argv0 = "-" + argv0
	}
	execPath, argv := shell, []string{argv0}
	if j.InteractivePort > 0 {
		if !e.conf().SourceLoginInteractive {
			argv[0] = path.Base(shell)
		} else {
			argv[0] = "-" + path.Base(shell)
		}
		if j.InteractiveCmd != "" {
			argv = append(argv, "-c", j.InteractiveCmd)
		}
	}
	if x := e.conf().CheckpointRunExe; x != "" && !r.ckpt.opts.Never && j.InteractivePort <= 0 {
		// $checkpoint_run_exe (e.g. dmtcp_launch) runs the shell
		execPath, argv = x, append([]string{x, shell}, argv...)
	}
	restartArgv, restartEnv, restart := e.restartPoint(r)
	if restart {
		execPath, argv = restartArgv[0], restartArgv
	}
	if e.conf().JobStarter != "" {
		execPath, argv = e.conf().JobStarter, append([]string{e.conf().JobStarter, execPath}, argv[1:]...)
	}
	dir := cred.Home
	if v, ok := j.Var("PBS_O_INITDIR"); ok && v != "" {
		dir = v
	}
	chroot, _ := j.Var("PBS_O_ROOTDIR")
	spec := starterSpec{
		UID: cred.UID, GID: cred.GID, Groups: cred.Groups,
		Limits: r.limits.rlimits, Nice: r.limits.nice, OOMAdjust: e.conf().JobOOMScoreAdjust,
		Chroot: chroot, Dir: dir, Umask: e.outputUmask(j), Path: execPath, Argv: argv,
	}
	specJSON, err := json.Marshal(&spec)
	if err != nil {
		return 0, JOB_EXEC_FAIL1, err
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return 0, JOB_EXEC_RETRY, err
	}
	defer stdinW.Close()
	reportR, reportW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		return 0, JOB_EXEC_RETRY, err
	}
	defer reportR.Close()
	cmd := exec.Command(e.opt.StarterPath, starterFlag, string(specJSON))
	cmd.Env = append(e.jobEnvironment(r, shell), restartEnv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdout, stderr
	cmd.ExtraFiles = []*os.File{reportW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	e.makeGroup(r)
	inGroup(cmd.SysProcAttr, r.cg)
	if r.inter != nil {
		// The terminal is the shell's stdin and controlling terminal.
		cmd.Stdin = r.inter.slave
		cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
	}
	err = cmd.Start()
	stdinR.Close()
	reportW.Close()
	if err != nil {
		return 0, JOB_EXEC_RETRY, fmt.Errorf("start job starter: %w", err)
	}
	_ = reportR.SetReadDeadline(time.Now().Add(e.conf().JobStartBlockTime + 30*time.Second))
	if err := readStarterReport(reportR); err != nil {
		_ = cmd.Process.Kill()
		werr := cmd.Wait()
		var se *StartError
		if errors.As(err, &se) {
			if se.Status == JOB_EXEC_CMDFAIL && werr != nil {
				se.Msg += " (" + werr.Error() + ")"
			}
			return 0, se.Status, errors.New(se.Msg)
		}
		return 0, JOB_EXEC_CMDFAIL, err
	}
	if r.inter != nil {
		r.inter.slave.Close()
		r.inter.slave = nil
		r.inter.relay()
	} else if restart {
		e.log.Job(logline.EventJob, j.ID, "restarted from checkpoint "+j.CheckpointName)
	} else {
		line := script
		if e.conf().ExecWithExec {
			line = "exec " + line
		}
		if j.JobArguments != "" {
			line += " " + j.JobArguments
		}
		_, _ = stdinW.WriteString(line + "\n")
	}

	e.mu.Lock()
	r.cmd = cmd
	r.sid = cmd.Process.Pid
	r.started = e.opt.Now()
	r.ckpt.last = r.started
	r.state = StateRunning
	e.mu.Unlock()
	e.log.Record(logline.EventError, momlog.ClassJob, "TMomFinalizeJob3",
		fmt.Sprintf("job %s started, pid = %d", j.ID, r.sid))
	_ = WriteTaskRecord(e.TaskFilePath(j.Prefix), TaskRecord{JobID: j.ID, TaskID: 1, Status: TaskRunning, SessionID: r.sid})
	go e.wait(r)
	return r.sid, 0, nil
}

// selectShell picks the shell (spec 11 §3.1).
func (e *Engine) selectShell(j *Job, cred *Credentials) string {
	if j.ShellPathList != "" {
		var plain string
		for _, entry := range strings.Split(j.ShellPathList, ",") {
			p, host, hasHost := strings.Cut(strings.TrimSpace(entry), "@")
			if p == "" {
				continue
			}
			if hasHost {
				if IsLocalHost(host, e.opt.Host) {
					return p
				}
				continue
			}
			if plain == "" {
				plain = p
			}
		}
		if plain != "" {
			return plain
		}
	}
	return cred.Shell
}

// IsLocalHost reports whether host (a name or an address) denotes this
// MOM, whose host name is self: "localhost…", a loopback address, self
// (in any letter case) or its short form, or the short form of self when
// host is a longer name of it.
func IsLocalHost(host, self string) bool {
	if host == "" {
		return false
	}
	if strings.HasPrefix(host, "localhost") {
		return true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.IsLoopback()
	}
	shortHost, _, _ := strings.Cut(host, ".")
	shortSelf, _, _ := strings.Cut(self, ".")
	return strings.EqualFold(host, self) || strings.EqualFold(host, shortSelf) || strings.EqualFold(shortHost, self)
}

// writeNodefile writes aux/<jobid>, one line per virtual node.
func (e *Engine) writeNodefile(r *runningJob) error {
	var b strings.Builder
	if m, ok := r.job.Var("BEOWULF_JOB_MAP"); ok && m != "" {
		for _, h := range strings.Split(m, ":") {
			b.WriteString(h + e.conf().NodefileSuffix + "\n")
		}
	} else {
		for _, v := range r.vnodes {
			b.WriteString(v.Host + e.conf().NodefileSuffix + "\n")
		}
		if len(r.vnodes) == 0 {
			b.WriteString(e.opt.Host + e.conf().NodefileSuffix + "\n")
		}
	}
	p := filepath.Join(e.home, "aux", r.job.ID)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write node file: %w", err)
	}
	_ = os.Chmod(p, 0o644)
	r.nodefile = p
	return nil
}

// makeTmpdir creates $tmpdir/<jobid> owned by the user, mode 0755.
func (e *Engine) makeTmpdir(r *runningJob) error {
	p := filepath.Join(e.conf().TmpDir, r.job.ID)
	fi, err := os.Lstat(p)
	if err == nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || !ok || st.Uid != r.cred.UID {
			return fmt.Errorf("tmpdir %s exists and is not owned by %s", p, r.cred.Name)
		}
		r.tmpdir = p
		return nil
	}
	// Created (with missing parents) as the job user.
	err = asUser(r.cred, func() error {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		return os.Chmod(p, 0o755)
	})
	if err != nil {
		return fmt.Errorf("create tmpdir: %w", err)
	}
	r.tmpdir, r.tmpdirCreated = p, true
	return nil
}

// wait reaps the job's shell and finishes the job.
func (e *Engine) wait(r *runningJob) {
	err := r.cmd.Wait()
	status := 0
	var cpu int64
	if ps := r.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled():
				status = 256 + int(ws.Signal())
			case ws.Exited():
				status = ws.ExitStatus()
			}
		}
		cpu = int64((ps.UserTime() + ps.SystemTime()).Seconds())
	} else if err != nil {
		status = JOB_EXEC_FAIL2
	}
	if r.inter != nil {
		r.inter.finish()
	}
	e.mu.Lock()
	killed := r.limitKill
	xcpu := ""
	if status == 256+int(syscall.SIGXCPU) && r.limits.pcput > 0 && r.overLimit == 0 {
		// The shell passed its RLIMIT_CPU (pcput, spec 11 §7): a
		// job killed over its limit.
		xcpu = fmt.Sprintf("pcput exceeded limit %d", r.limits.pcput)
		r.overLimit, r.limitMsg = 1, xcpu
	}
	e.mu.Unlock()
	if xcpu != "" {
		e.noteLimitKill(r, xcpu)
	}
	if !killed.IsZero() {
		// The shell died of a poll's SIGTERM: TORQUE's MOM, busy
		// signalling when it died, notices at its next loop turn, a
		// second later (capture 96: the kill at 02:35:57, the SIGKILL
		// walk over the zombies, the end and the obit at 02:35:58.26,
		// walltime 10).
		time.Sleep(time.Until(killed.Add(overLimitEndDelay)))
	}
	// TORQUE's MOM logs the shell's end after killing what is left of
	// the session (captures 58, 62, 96, 99: the SIGKILL walk, then
	// scan_for_terminated, then "job was terminated").
	e.finishNoting(r, status, cpu, "", false,
		fmt.Sprintf("scan_for_terminated: job %s task 1 terminated, sid=%d", r.job.ID, r.sid))
}

// overLimitEndDelay is how long after a poll's over-limit SIGTERM the end
// of the job it killed is processed.
const overLimitEndDelay = time.Second

// finish kills leftovers, computes the final status and usage and reports
// the exit. cpu is CPU time (seconds) known from wait's rusage.
func (e *Engine) finish(r *runningJob, status int, cpu int64, msg string, startFailed bool) {
	e.finishNoting(r, status, cpu, msg, startFailed, "")
}

// finishNoting is finish that also logs note (a debug event of the job),
// when not empty, once the leftover processes are killed.
func (e *Engine) finishNoting(r *runningJob, status int, cpu int64, msg string, startFailed bool, note string) {
	logNote := func() {
		if note != "" {
			e.log.Job(logline.EventDebug, r.job.ID, note)
		}
	}
	e.mu.Lock()
	if r.state == StateExited || r.finishing {
		e.mu.Unlock()
		logNote()
		return
	}
	r.finishing = true
	sid := r.sid
	e.mu.Unlock()
	if sid > 0 && !r.noKill {
		e.killSession(r, syscall.SIGKILL)
	}
	if !r.noKill {
		e.endGroup(r, startFailed)
	}
	logNote()
	if sid > 0 {
		// The job's own processes are gone: this sample gives it its
		// final walltime and the other running jobs fresh usage.
		e.sampleAll()
	}
	e.mu.Lock()
	if sid > 0 {
		if c := int64(float64(cpu) * e.conf().CputMult); c > r.usage.CPUTime {
			r.usage.CPUTime = c
		}
	}
	if !startFailed {
		switch {
		case r.overLimit > 0:
			status = JOB_EXEC_OVERLIMIT
			msg = r.limitMsg
		case r.rerun:
			status = 0
		}
	}
	r.state = StateExited
	ex := Exit{JobID: r.job.ID, SessionID: sid, Status: status, Usage: r.usage, StartFailed: startFailed, Message: msg,
		CheckpointName: r.ckpt.name, CheckpointTime: r.ckpt.at}
	r.exit = &ex
	e.mu.Unlock()
	if sid > 0 {
		e.log.Job(logline.EventJob, r.job.ID, "job was terminated")
		_ = WriteTaskRecord(e.TaskFilePath(r.job.Prefix), TaskRecord{JobID: r.job.ID, TaskID: 1, Status: TaskExited, SessionID: sid, ExitStatus: status})
	} else {
		e.log.Job(logline.EventDebug, r.job.ID, "job start failed: "+msg)
	}
	close(r.done)
	if e.opt.OnExit != nil && !r.sister {
		go e.opt.OnExit(ex)
	}
}

// Wait blocks until the job has ended (or ctx is done) and returns its Exit.
func (e *Engine) Wait(ctx context.Context, jobID string) (Exit, error) {
	e.mu.Lock()
	r, ok := e.jobs[jobID]
	e.mu.Unlock()
	if !ok {
		return Exit{}, ErrUnknownJob
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return Exit{}, ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return *r.exit, nil
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
