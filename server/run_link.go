package server

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/link/mom"
	"gopbs/server/state"
	"gopbs/server/store"
)

// runLink is the server's side of running jobs: the TCP requests to
// MOMs (launch, relays, end of jobs, polls). Its own mutex guards only
// its bookkeeping and is never held while taking Server.mu.
type runLink struct {
	s *Server

	mu        sync.Mutex
	suspended map[string]bool // job id → suspended by qsig -s suspend
	ending    map[string]int  // MOM host → end-of-job exchanges in progress

	deleting map[string]bool // job id → a delete is in progress

	// dialer, when set (tests), replaces the resolution of a MOM host
	// name to its address.
	dialer func(ctx context.Context, host string) (net.Conn, error)
	// resolve returns the addresses of a node name (tests replace it).
	resolve func(host string) []netip.Addr
	// groupOf returns the primary group of a user (tests replace it).
	groupOf func(user string) string
	// mailProgram is the sendmail command (tests replace it).
	mailProgram string
	// nannyInterval is the job nanny's period (tests shorten it).
	nannyInterval time.Duration
	// stageFailed holds, by job id, the MOM's reply text of a stage-in
	// that failed during a launch, until finishRun takes it (guarded by
	// mu).
	stageFailed map[string]string
	// retryDelay separates the two attempts to reach a MOM for a launch.
	retryDelay time.Duration
	// hotStartInterval separates a hot start's attempts to run the jobs
	// requeued by an immediate shutdown on their hosts again.
	hotStartInterval time.Duration
}

func newRunLink(s *Server) *runLink {
	rl := &runLink{
		s:             s,
		suspended:     make(map[string]bool),
		ending:        make(map[string]int),
		deleting:      make(map[string]bool),
		stageFailed:   make(map[string]string),
		resolve:       mom.ResolveAddr,
		groupOf:       lookupPrimaryGroup,
		mailProgram:   defaultMailProgram,
		nannyInterval: nannyInterval,
		retryDelay:    2 * time.Second,

		hotStartInterval: 15 * time.Second,
	}
	if s.cfg.ResolveHost != nil {
		rl.resolve = s.cfg.ResolveHost
	}
	return rl
}

// startRunLink starts the MOM and scheduler links: the IS endpoint on the
// server's port (UDP), node checking, job polling and the scheduler
// timer. It returns at once; everything stops when the server is done.
func (s *Server) startRunLink() {
	rl := s.run
	s.mu.Lock()
	for _, n := range s.nodes {
		// All nodes are down until their MOM says hello (spec 10 §5.6)
		// and offline until its first status (TORQUE).
		n.State |= state.NodeStateUnreported
	}
	s.mu.Unlock()
	s.is.Start(s.port())
	s.mu.Lock()
	resume := s.launch.recoverRunning()
	s.refreshNodeJobs() // jobs kept running across a warm restart hold their nodes
	s.mu.Unlock()
	for _, f := range resume {
		go f()
	}
	go rl.timers()
	if s.cfg.InitType == InitHot {
		go rl.s.launch.hotStart()
	}
	s.sched.Start(s.done)
}

// hotStartPeriod is how long a hot start keeps trying to run the jobs
// requeued by an immediate shutdown on their hosts again.
const hotStartPeriod = 300 * time.Second

// hotStart runs the jobs that an immediate shutdown requeued with their
// hosts kept (HOTSTART) on those hosts again: a first attempt at once,
// then every hotStartInterval for hotStartPeriod, as long as some are
// left (spec 12 §16.1). A job whose hosts are not up yet waits for the
// next round; the scheduler may meanwhile run it elsewhere.
func (ln *launcher) hotStart() {
	rl := ln.rl
	s := rl.s
	deadline := time.Now().Add(hotStartPeriod)
	for {
		s.mu.RLock()
		var pending []*state.Job
		for j := s.jobs.First(); j != nil; j = j.Next() {
			if j.State == pbsattr.StateQueued && j.Attrs.Get(pbsattr.JobExecHost) != "" {
				pending = append(pending, j)
			}
		}
		s.mu.RUnlock()
		left := 0
		for _, j := range pending {
			if !ln.runOnHosts(j) {
				left++
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
		select {
		case <-s.done:
			return
		case <-time.After(rl.hotStartInterval):
		}
	}
}

// hostsSpec turns an exec_host value into the node specification of the
// same hosts ("vm/0+vm/1+vm2/0" → "vm:ppn=2+vm2").
func hostsSpec(execHost string) string {
	var order []string
	count := map[string]int{}
	for _, x := range execSlots(execHost) {
		if count[x.host] == 0 {
			order = append(order, x.host)
		}
		count[x.host]++
	}
	parts := make([]string, len(order))
	for i, h := range order {
		parts[i] = h
		if count[h] > 1 {
			parts[i] += ":ppn=" + strconv.Itoa(count[h])
		}
	}
	return strings.Join(parts, "+")
}

// runOnHosts runs a hot-start job on the hosts of its exec_host. It
// reports whether the job no longer waits for that (it started, or it
// is no longer a queued hot-start job).
func (ln *launcher) runOnHosts(j *state.Job) bool {
	rl := ln.rl
	s := rl.s
	s.mu.Lock()
	execHost := j.Attrs.Get(pbsattr.JobExecHost)
	if s.jobs.Get(j.ID) != j || j.State != pbsattr.StateQueued || execHost == "" {
		s.mu.Unlock()
		return true
	}
	slots, bad := s.allocate(j, hostsSpec(execHost))
	if bad != nil {
		s.mu.Unlock()
		return false // its hosts are not up (yet)
	}
	s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job Run at hot start")
	l, err := ln.prepareRun(j, slots)
	if err != nil {
		s.mu.Unlock()
		s.logError("hot_start", err.Error())
		return true
	}
	wait := s.store.Submit(state.SaveJob(j))
	s.mu.Unlock()
	if err := wait(); err != nil {
		ln.abandonRun(j, "cannot save job")
		return true
	}
	p := ln.sendJob(l)
	if ln.finishRun(j, p) && !rl.endingWith(l.host) {
		go rl.pollJob(j.ID)
	}
	return true
}

// recoverRunning settles jobs a previous server left between states: a
// launch that was not confirmed is requeued (a new RunJob finds the job
// on the MOM as already running), and end-of-job or rerun processing
// that was cut short is resumed. Called with s.mu held; it returns the
// work to start once the lock is released.
func (ln *launcher) recoverRunning() []func() {
	s := ln.s
	var resume []func()
	var ops []store.Op
	for j := s.jobs.First(); j != nil; j = j.Next() {
		switch {
		case j.State == pbsattr.StateRunning && (j.Substate == pbsattr.SubPreRun || j.Substate == pbsattr.SubTrnOut):
			ln.requeue(j)
			ops = append(ops, state.SaveJob(j))
		case j.State == pbsattr.StateRunning && (j.Substate == pbsattr.SubRerun || j.Substate == pbsattr.SubRerun3):
			j := j
			s.run.beginEnd(motherSuperior(j.Attrs.Get(pbsattr.JobExecHost)))
			resume = append(resume, func() { s.run.endJob(j, 0, true) })
		case j.State == pbsattr.StateExiting:
			j := j
			exit, _ := strconv.Atoi(j.Attrs.Get(pbsattr.JobExitStatus))
			s.run.beginEnd(motherSuperior(j.Attrs.Get(pbsattr.JobExecHost)))
			resume = append(resume, func() { s.run.endJob(j, exit, false) })
		}
	}
	if len(ops) > 0 {
		s.store.Submit(ops...)
	}
	return resume
}

// logError writes a LOG_ERROR line (spec 12 §13.2).
func (s *Server) logError(fn, msg string) {
	s.log.Logf(1, "Svr", "PBS_Server", "LOG_ERROR::%s, %s", fn, msg)
}

// timers runs the periodic work of the link: node checks, job polls and
// the scheduler's timed cycle.
func (rl *runLink) timers() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var sec int64
	for {
		select {
		case <-rl.s.done:
			return
		case <-t.C:
		}
		sec++
		rl.s.is.Tick()
		rl.pollRunning(sec)
		rl.s.sched.Tick()
	}
}

// momDialer returns how the link connects to MOMs.
func (rl *runLink) momDialer() mom.Dialer {
	return mom.Dialer{Port: rl.s.cfg.MomPort, Resolve: rl.s.cfg.ResolveHost, Dial: rl.dialer, Obs: rl.s.obs}
}

// dialMom connects to the MOM on host.
func (rl *runLink) dialMom(host string) (*mom.Conn, error) { return rl.momDialer().Connect(host) }

// momRequest sends one request to the MOM on host on a new connection.
func (rl *runLink) momRequest(host string, typ int, body batchreq.Body, ext string) (*batchreq.Reply, error) {
	return rl.momDialer().Request(host, typ, body, ext)
}

// Output of rerun jobs (spec 10 §6.1 step c, §8.6): when a job that ran
// on a MOM other than the server's host is rerun, the server asks that
// MOM for the job's spooled stdout and stderr (Rerun), which the MOM
// returns with MvJobFile into the server's spool directory; the next
// launch of the job on a remote MOM sends them on (MvJobFile before
// RdytoCommit), so the rerun job's output continues the first run's.

// spoolSuffixes maps MvJobFile file types to spool file suffixes, in the
// order a launch sends them.
var spoolSuffixes = []struct {
	typ    int
	suffix string
}{{batchreq.StdOut, ".OU"}, {batchreq.StdErr, ".ER"}, {batchreq.Chkpt, ".CK"}}

// spoolPath returns the server's spool file of a job prefix and file
// type, "" for a type that has none.
func (rl *runLink) spoolPath(prefix string, typ int) string {
	s := rl.s
	for _, f := range spoolSuffixes {
		if f.typ == typ {
			return filepath.Join(s.cfg.Home, "spool", prefix+f.suffix)
		}
	}
	return ""
}

// onServerHost reports whether a MOM host is the server's own host: an
// address of the host is one of the server name's.
func (rl *runLink) onServerHost(host string) bool {
	own := rl.resolve(rl.s.name)
	for _, a := range rl.resolve(host) {
		if slices.Contains(own, a) {
			return true
		}
	}
	return false
}

// handleMvJobFile stores one chunk of a job's stdout, stderr or
// checkpoint file that its mother superior returns (spec 10 §8.6): chunk
// 0 creates the spool file, later chunks append.
func (rl *runLink) handleMvJobFile(c *handler.Conn, req *batchreq.Request) {
	s := rl.s
	body := req.Body.(*batchreq.JobFile)
	if !c.Asker.Privileged {
		c.Reject(batchreq.PBSE_PERM, "")
		return
	}
	s.mu.RLock()
	j := s.findJob(body.JobID)
	var ms, prefix string
	if j != nil {
		ms = motherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
		if prefix = j.Attrs.Get(pbsattr.JobHashname); prefix == "" {
			prefix = filePrefix(j.ID)
		}
	}
	s.mu.RUnlock()
	if j == nil || ms != "" && !rl.fromHost(c.Remote.Addr(), ms) {
		c.Reject(batchreq.PBSE_UNKJOBID, "")
		return
	}
	name := rl.spoolPath(prefix, body.FileType)
	if name == "" {
		c.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	flags := os.O_WRONLY | os.O_APPEND
	if body.Seq == 0 {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	err := os.MkdirAll(filepath.Dir(name), 0o755)
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(name, flags|syscall.O_NOFOLLOW, 0o600); err == nil {
			_, err = f.Write(body.Data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		s.logError("req_mvjobfile", err.Error())
		c.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save job file"))
		return
	}
	c.Send(batchreq.NullReply())
}

// sendSpool sends the spool files a rerun job's previous MOM returned
// to the job's new MOM, each that exists, in chunks (spec 10 §6.1 step
// c). It returns a failure reply, or nil.
func (rl *runLink) sendSpool(m *mom.Conn, l *launch) *batchreq.Reply {
	for _, f := range spoolSuffixes {
		data, err := os.ReadFile(rl.spoolPath(l.prefix, f.typ))
		if err != nil {
			continue
		}
		for seq := 0; seq == 0 || len(data) > 0; seq++ {
			n := min(len(data), scriptChunk)
			p, err := m.Call(batchreq.PBS_BATCH_MvJobFile, &batchreq.JobFile{Seq: seq, FileType: f.typ, JobID: l.id, Data: data[:n]}, "")
			if err != nil {
				return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
			}
			if p.Code != 0 {
				return p
			}
			data = data[n:]
		}
	}
	return nil
}

// removeSpool removes a job's spool files once they reached its MOM.
func (rl *runLink) removeSpool(prefix string) {
	for _, f := range spoolSuffixes {
		os.Remove(rl.spoolPath(prefix, f.typ))
	}
}
