// This file starts a job (the Commit step, spec 11 §3): the prologue, the
// shell chosen from the job's shell list, the nodefile and TMPDIR, the
// session started through the starter, and the goroutine that waits for
// its end (Start, start).

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
	"strings"
	"syscall"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/checkpoint"
	"gopbs/mom/momlog"
)

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
