package schedulers

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/iff"
	"gopbs/server/store"
)

// Host is the server as the Supervisor uses it. The Supervisor runs the
// processes; the server's scheduler link runs their cycles.
type Host interface {
	// Run tells the server that scheduler s listens on its host and
	// port (started, found running, or run by the site on another host)
	// and asks it for a cycle cmd: "first" after a start, "command"
	// after a change of its object.
	Run(s *Sched, cmd int)
	// Stopped tells the server that scheduler name no longer runs: no
	// cycle is to be tried until Run again.
	Stopped(name string)
	// Save makes store operations durable (comments and scheduling the
	// Supervisor sets).
	Save(ops ...store.Op)
	// Logf writes a server log line about scheduler name.
	Logf(name, format string, args ...any)
}

// RunConfig says how schedulers are started.
type RunConfig struct {
	// Command is the scheduler program (GoPBS's pbs_sched).
	Command string
	// Home is PBS_HOME, given to the scheduler with -d.
	Home string
	// RMPort is the MOMs' resource-monitor port (-R).
	RMPort int
	// Local reports whether a host name is this server's host: the
	// server starts only the schedulers of its own host, which listen
	// on the loopback address.
	Local func(host string) bool
	// RestartDelay is the first pause before a dead scheduler is
	// started again (doubling up to a minute); default 1 s.
	RestartDelay time.Duration
	// Tick is the period of the timed checks; default 1 s.
	Tick time.Duration

	// Failover (seed 003, interface 4): Self is the host this server
	// runs on, Peers the hosts of the other servers of its failover
	// group, and Primary says this server is the group's first. A
	// scheduler whose host is a peer's is taken over when this server
	// is active: the primary always (it stops the peer's scheduler
	// with Quit and starts it here), another server when Reach cannot
	// connect to it. Taken over, the scheduler's host is Self.
	Self    string
	Peers   []string
	Primary bool
	// Reach reports whether a scheduler listens on host:port (nil:
	// a connection attempt of a few seconds).
	Reach func(host string, port int) bool
	// Quit asks the scheduler on host:port to stop (nil: the
	// scheduler command SCH_QUIT on a connection to it).
	Quit func(host string, port int)
}

// Comments the Supervisor gives a scheduler (seed 003, interface 1 and 2).
const (
	CommentRestarted     = "scheduler restarted"
	CommentAttention     = "NEEDS_ATTENTION"
	CommentReady         = "READY_TO_USE"
	CommentPrivAccess    = "scheduler can not access it's priv directory"
	CommentLogAccess     = "scheduler can not access it's log directory"
	CommentPrivChecks    = "PBS failed validation checks for sched_priv directory"
	CommentCannotStart   = "scheduler could not be started"
	CommentPrivChange    = "Unable to change the sched_priv directory"
	CommentLogChange     = "Unable to change the sched_logs directory"
	CommentNoPartition   = "Scheduler does not contain a partition"
	restartsForAttention = 3
)

// Supervisor starts the non-default schedulers whose scheduling is true,
// restarts those that die and stops them, one loop per scheduler; it
// hands each running scheduler to the server (Host.Run), whose scheduler
// link runs its cycles.
type Supervisor struct {
	t   *Table
	h   Host
	cfg RunConfig

	mu      sync.Mutex
	loops   map[string]*loop
	stopped bool
	wg      sync.WaitGroup
}

// NewSupervisor returns a Supervisor of the schedulers in t.
func NewSupervisor(t *Table, h Host, cfg RunConfig) *Supervisor {
	if cfg.RestartDelay == 0 {
		cfg.RestartDelay = time.Second
	}
	if cfg.Tick == 0 {
		cfg.Tick = time.Second
	}
	if cfg.Local == nil {
		cfg.Local = func(string) bool { return true }
	}
	if cfg.Reach == nil {
		cfg.Reach = reach
	}
	if cfg.Quit == nil {
		cfg.Quit = quit
	}
	return &Supervisor{t: t, h: h, cfg: cfg, loops: map[string]*loop{}}
}

// Start starts a loop for every non-default scheduler.
func (sv *Supervisor) Start() {
	for _, s := range sv.t.List() {
		if !s.IsDefault() {
			sv.Changed(s.Name)
		}
	}
}

// Changed tells the Supervisor that a sched object was created, changed
// or deleted.
func (sv *Supervisor) Changed(name string) {
	if name == DefaultName {
		return
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.stopped {
		return
	}
	l := sv.loops[name]
	if l == nil {
		l = &loop{sv: sv, name: name, kick: make(chan struct{}, 1), quit: make(chan bool, 1)}
		sv.loops[name] = l
		sv.wg.Add(1)
		go func() {
			defer sv.wg.Done()
			l.run()
			sv.mu.Lock()
			if sv.loops[name] == l {
				delete(sv.loops, name)
			}
			sv.mu.Unlock()
		}()
		return
	}
	l.poke(true)
}

// Stop ends the loops; with kill, the scheduler processes are stopped
// too (qterm -s), otherwise they are left running for the next server.
func (sv *Supervisor) Stop(kill bool) {
	sv.mu.Lock()
	sv.stopped = true
	for _, l := range sv.loops {
		select {
		case l.quit <- kill:
		default:
		}
		l.poke(false)
	}
	sv.mu.Unlock()
	sv.wg.Wait()
}

// loop runs one scheduler.
type loop struct {
	sv   *Supervisor
	name string
	kick chan struct{}
	quit chan bool

	mu      sync.Mutex
	changed bool // the sched object changed since the loop last looked

	proc      *exec.Cmd
	exited    chan struct{}
	running   *Sched // the object as the process was started with
	restarts  []time.Time
	nextStart time.Time
	delay     time.Duration
	up        bool   // handed to the server's link (Host.Run)
	dirs      *Sched // sched_priv and sched_log as last checked
	// unpartitioned is set when the scheduler shut itself down for
	// having no partition: it is not started again until it has one.
	unpartitioned bool
	// adopted is set while the scheduler runs as a process the
	// Supervisor did not start (left running by the previous server):
	// it is driven as it is, and stopped through its lock file's pid.
	adopted *Sched
	// priv is the sched_priv of the object at the latest turn: an
	// adopted scheduler moves its lock file there at its next cycle.
	priv string
}

func (l *loop) poke(changed bool) {
	if changed {
		l.mu.Lock()
		l.changed = true
		l.mu.Unlock()
	}
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

func (l *loop) run() {
	sv := l.sv
	tick := time.NewTicker(sv.cfg.Tick)
	defer tick.Stop()
	l.delay = sv.cfg.RestartDelay
	for {
		var exited chan struct{}
		if l.proc != nil {
			exited = l.exited
		}
		select {
		case kill := <-l.quit:
			if kill {
				l.stopProc()
			}
			return
		case <-exited:
			l.procExited()
		case <-l.kick:
		case <-tick.C:
		}
		s := sv.t.Get(l.name)
		if s == nil {
			l.stopProc() // deleted
			l.down()
			return
		}
		l.mu.Lock()
		changed := l.changed
		l.changed = false
		l.mu.Unlock()
		l.turn(s, changed)
	}
}

// turn brings the scheduler in line with its object s: started, stopped,
// restarted or handed to the server; changed says the object changed.
func (l *loop) turn(s *Sched, changed bool) {
	sv := l.sv
	l.priv = s.Priv
	if !s.Scheduling {
		if l.proc != nil || l.adopted != nil {
			l.stopProc()
		}
		l.down()
		l.running, l.dirs = nil, nil
		return
	}
	if len(s.Partitions) > 0 && l.unpartitioned {
		l.unpartitioned = false
		if s.Comment == CommentNoPartition {
			if op, ok := sv.t.SetComment(l.name, ""); ok {
				sv.h.Save(op)
			}
		}
	} else if l.unpartitioned {
		return // it shut itself down for having no partition (procExited)
	}
	if (l.proc != nil || l.adopted != nil) && changed && l.running != nil && !sameRun(l.running, s) {
		sv.h.Logf(l.name, "scheduler %s restarted for its new attributes", l.name)
		l.stopProc()
		l.down()
	}
	if l.up && changed && !l.dirsOK(s) {
		return // scheduling is off now: the next turn stops it
	}
	local := sv.cfg.Local(s.Host)
	if !local && !l.up && slices.Contains(sv.cfg.Peers, s.Host) {
		if t := l.takeOver(s); t != nil {
			s, local = t, true
		}
	}
	if l.adopted != nil && !portOpen(s.Port) {
		sv.h.Logf(l.name, "scheduler %s no longer answers on port %d", l.name, s.Port)
		l.adopted = nil // gone: started below
		l.down()
	}
	if local && l.proc == nil && l.adopted == nil && portOpen(s.Port) {
		sv.h.Logf(l.name, "scheduler %s already runs on port %d", l.name, s.Port)
		l.adopted, l.running = s, s
	}
	if local && l.proc == nil && l.adopted == nil {
		if time.Now().Before(l.nextStart) || !l.startProc(s) {
			l.down()
			return
		}
	}
	switch {
	case !l.up:
		// started, found running, or (another host's) run by the
		// site: the server connects to it
		l.running, l.dirs, l.up = s, s, true
		sv.t.SetState(l.name, StateIdle)
		sv.h.Run(s, batchreq.SCH_SCHEDULE_FIRST)
	case changed:
		sv.h.Run(s, batchreq.SCH_SCHEDULE_CMD)
	}
}

// sameRun reports whether a running scheduler can go on under the new
// attributes: only its partitions, iteration, directories or comment
// changed (the scheduler takes new directories on itself).
func sameRun(a, b *Sched) bool {
	return a.Host == b.Host && a.Port == b.Port && a.User == b.User
}

// takeOver takes a scheduler of a failover peer's host over (seed 003,
// interface 4): the primary server stops the peer's scheduler and runs
// it here; another server does so only when it cannot connect to it. It
// returns the object with this host in host, or nil when the scheduler
// stays the peer's.
func (l *loop) takeOver(s *Sched) *Sched {
	sv := l.sv
	if sv.cfg.Primary {
		sv.cfg.Quit(s.Host, s.Port)
		sv.h.Logf(l.name, "scheduler %s of %s stopped: the primary server runs it", l.name, s.Host)
	} else if sv.cfg.Reach(s.Host, s.Port) {
		return nil // the peer's scheduler runs: the server connects to it
	}
	op, ok := sv.t.SetHost(l.name, sv.cfg.Self)
	if !ok {
		return nil
	}
	sv.h.Save(op)
	sv.h.Logf(l.name, "scheduler %s of %s taken over by this server (host %s)", l.name, s.Host, sv.cfg.Self)
	l.running = nil
	return sv.t.Get(l.name)
}

// down takes the scheduler from the server's link.
func (l *loop) down() {
	if l.up {
		l.up = false
		l.sv.h.Stopped(l.name)
	}
	l.sv.t.SetState(l.name, StateDown)
}

// dirsOK checks a sched_priv or sched_log changed while the scheduler
// runs, which the scheduler itself takes on at its next cycle (seed 003,
// interface 2): a sched_priv that fails the server's checks turns
// scheduling off with the seed's comment; a new sched_log is created
// for the scheduler's user.
func (l *loop) dirsOK(s *Sched) bool {
	if l.dirs == nil || l.dirs.Priv == s.Priv && l.dirs.Log == s.Log {
		return true
	}
	uid, gid, err := lookupIDs(s.User)
	if err != nil {
		l.fail(s, CommentCannotStart+": "+err.Error(), true)
		return false
	}
	if s.Priv != l.dirs.Priv {
		if msg := checkDir(s.Priv, uid, true); msg != "" {
			l.sv.h.Logf(l.name, "scheduler %s: %s: %s", l.name, CommentPrivChecks, msg)
			l.fail(s, CommentPrivChecks, true)
			return false
		}
	}
	if s.Log != l.dirs.Log {
		if err := os.MkdirAll(s.Log, 0o755); err == nil {
			_ = os.Chown(s.Log, uid, gid)
		}
	}
	l.dirs = s
	return true
}

// startProc validates the directories and starts the scheduler process.
// It reports whether the scheduler runs.
func (l *loop) startProc(s *Sched) bool {
	sv := l.sv
	uid, gid, err := lookupIDs(s.User)
	if err != nil {
		l.fail(s, CommentCannotStart+": "+err.Error(), true)
		return false
	}
	if msg := checkDir(s.Priv, uid, true); msg != "" {
		l.fail(s, CommentPrivChecks+": "+msg, true)
		return false
	}
	if _, err := os.Stat(filepath.Join(s.Priv, "sched_config")); err != nil {
		l.fail(s, CommentPrivAccess, true)
		return false
	}
	if err := os.MkdirAll(s.Log, 0o755); err == nil {
		_ = os.Chown(s.Log, uid, gid)
	}
	if msg := checkDir(s.Log, uid, false); msg != "" {
		l.fail(s, CommentLogAccess+": "+msg, true)
		return false
	}
	args := []string{"-D", "-d", sv.cfg.Home, "-S", strconv.Itoa(s.Port), "-priv", s.Priv, "-log", s.Log,
		"-name", s.Name, "-listen", "127.0.0.1"}
	if sv.cfg.RMPort != 0 {
		args = append(args, "-R", strconv.Itoa(sv.cfg.RMPort))
	}
	cmd := exec.Command(sv.cfg.Command, args...)
	out, err := os.OpenFile(filepath.Join(s.Priv, "sched_out"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err == nil {
		_ = out.Chown(uid, gid)
		cmd.Stdout, cmd.Stderr = out, out
		defer out.Close()
	}
	cmd.Dir = s.Priv
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if uid != os.Geteuid() {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if err := cmd.Start(); err != nil {
		l.fail(s, CommentCannotStart+": "+err.Error(), false)
		return false
	}
	l.proc, l.running = cmd, s
	l.exited = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) {
		_ = c.Wait()
		close(done)
	}(cmd, l.exited)
	sv.h.Logf(l.name, "scheduler %s started, pid %d, port %d", l.name, cmd.Process.Pid, s.Port)
	// wait for its port, so that the first cycle finds it
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-l.exited:
			return true // procExited at the next turn
		case <-time.After(50 * time.Millisecond):
		}
		if portOpen(s.Port) {
			break
		}
	}
	return true
}

// fail records that a scheduler cannot run: its comment says why, and
// with off its scheduling is turned off (seed 003, interface 2).
func (l *loop) fail(s *Sched, comment string, off bool) {
	sv := l.sv
	sv.h.Logf(l.name, "scheduler %s: %s", l.name, comment)
	var op store.Op
	var ok bool
	if off {
		op, ok = sv.t.SetScheduling(l.name, false, comment)
	} else {
		op, ok = sv.t.SetComment(l.name, comment)
	}
	if ok {
		sv.h.Save(op)
	}
	l.nextStart = time.Now().Add(l.delay)
}

// procExited handles the death of the scheduler process: it is started
// again after a pause that doubles with every quick death, and its
// comment says so ("NEEDS_ATTENTION" after three restarts in an hour).
func (l *loop) procExited() {
	sv := l.sv
	st := "exited"
	if ps := l.proc.ProcessState; ps != nil {
		st = ps.String()
	}
	l.proc = nil
	l.down()
	if s := sv.t.Get(l.name); s != nil && len(s.Partitions) == 0 {
		// A scheduler without partition would schedule what the
		// default one does: it said so in its log and shut down (seed
		// 003, interface 2); it waits for a partition.
		l.unpartitioned = true
		sv.h.Logf(l.name, "scheduler %s %s: it has no partition", l.name, st)
		if op, ok := sv.t.SetComment(l.name, CommentNoPartition); ok {
			sv.h.Save(op)
		}
		return
	}
	now := time.Now()
	l.restarts = slices.DeleteFunc(l.restarts, func(t time.Time) bool { return now.Sub(t) > time.Hour })
	l.restarts = append(l.restarts, now)
	comment := fmt.Sprintf("%s %d time(s) in the last hour (%s at %s)", CommentRestarted, len(l.restarts), st, now.Format(time.RFC3339))
	if len(l.restarts) >= restartsForAttention {
		comment = CommentAttention + ": " + comment
	}
	sv.h.Logf(l.name, "scheduler %s %s; starting it again", l.name, st)
	if op, ok := sv.t.SetComment(l.name, comment); ok {
		sv.h.Save(op)
	}
	l.nextStart = now.Add(l.delay)
	if l.delay < time.Minute {
		l.delay *= 2
	}
}

// stopProc stops the scheduler process (SIGTERM, then SIGKILL after 5 s).
func (l *loop) stopProc() {
	if a := l.adopted; a != nil {
		l.adopted = nil
		if pid := livePID(l.priv, a.Priv); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			l.sv.h.Logf(l.name, "scheduler %s (pid %d) stopped", l.name, pid)
		}
		l.sv.t.SetState(l.name, StateDown)
		return
	}
	if l.proc == nil {
		return
	}
	p := l.proc
	_ = p.Process.Signal(syscall.SIGTERM)
	select {
	case <-l.exited:
	case <-time.After(5 * time.Second):
		_ = p.Process.Kill()
		<-l.exited
	}
	l.sv.h.Logf(l.name, "scheduler %s stopped", l.name)
	l.proc = nil
	l.sv.t.SetState(l.name, StateDown)
}

// lookupIDs returns the uid and gid of a user.
func lookupIDs(name string) (int, int, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("sched_user %s: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("sched_user %s: ids %s/%s", name, u.Uid, u.Gid)
	}
	return uid, gid, nil
}

// checkDir checks a scheduler directory: it exists, is a directory,
// belongs to the scheduler's user and, for sched_priv, is writable by
// no one else (750 or stricter). It returns "" or what is wrong.
func checkDir(dir string, uid int, priv bool) string {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return err.Error()
	case !fi.IsDir():
		return dir + " is not a directory"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
		return fmt.Sprintf("%s belongs to uid %d, not %d", dir, st.Uid, uid)
	}
	if priv && fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("%s is writable by others (%o)", dir, fi.Mode().Perm())
	}
	return ""
}

// reach reports whether something accepts connections on host:port.
func reach(host string, port int) bool {
	nc, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), 3*time.Second)
	if err != nil {
		return false
	}
	nc.Close()
	return true
}

// quit sends the scheduler on host:port the command SCH_QUIT, from a
// reserved port as the server's cycles come.
func quit(host string, port int) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	d := iff.ReservedDialer{Unprivileged: true}
	nc, err := d.Dial(ctx, net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(3 * time.Second))
	_ = batchreq.WriteSchedCommand(nc, batchreq.SCH_QUIT)
}
