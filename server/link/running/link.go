// Package running is pbs_server's side of running jobs (spec 10 §6-§9):
// the launch of a job on its mother superior (RunJob, AsyrunJob), the
// MOMs' obits and the end-of-job processing, the requests relayed to a
// running job's MOM (signal, message, rerun, checkpoint, hold, resource
// changes, delete), the mail of those events, the polls of running jobs,
// the spool files of rerun jobs, the running jobs' part of a shutdown
// and, at start-up, the jobs to resume or to run again on their hosts.
//
// The link sees the server only through the narrow Host interface: the
// job table, the server's attributes, the job life cycle (completion,
// dependents, requeue), node placement and the scheduler's trigger. Every
// change of a job it makes goes through a state.Txn whose batch it makes
// durable before it answers. It talks to MOMs through package
// server/link/mom and implements handler.Running for the job-control
// handlers.
package running

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/jobmail"
	"gopbs/server/link/mom"
	"gopbs/server/monitor"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// Host is the server as the link sees it. Lock, Unlock, RLock and
// RUnlock take and release the server's lock; every other method is
// called with it held (read or write, as the method says) and never
// blocks on the network or the disk.
type Host interface {
	Lock()
	Unlock()
	RLock()
	RUnlock()

	// Begin starts a transaction over the state (lock held).
	Begin() *state.Txn
	// Jobs returns the job table.
	Jobs() *state.Jobs
	// FindJob returns the job a request names (a short id is
	// completed), or nil.
	FindJob(id string) *state.Job
	// Attrs returns the server's attributes.
	Attrs() state.Attrs
	// Now returns the server's clock.
	Now() time.Time
	// Script returns a job's script from the store.
	Script(j *state.Job) ([]byte, error)
	// GroupOf returns the primary group of a user, or "".
	GroupOf(user string) string

	// Requeue puts a running job back in its queue in tx, forgetting
	// where it ran; its state follows from its holds, execution time
	// and dependencies (queued, held or waiting).
	Requeue(tx *state.Txn, j *state.Job)
	// Touch records that a job changed (its modification time).
	Touch(j *state.Job)
	// Complete ends a job, successfully or not, in tx: COMPLETE, its
	// dependents and array handled, purged now or after keep_completed.
	Complete(tx *state.Txn, j *state.Job, ok bool)
	// ReleaseDependents applies the end of job j to the jobs that
	// depend on it (before* dependencies), in tx: released jobs are
	// saved, those whose condition can no longer be met are deleted.
	// It reports whether a job was released.
	ReleaseDependents(tx *state.Txn, j *state.Job, ok bool) bool
	// Started applies a job's start to its sync set and to its after:
	// and afterstartarray children, saving those released in tx.
	Started(tx *state.Txn, j *state.Job)

	// Place chooses the nodes of job j for a RunJob on connection c
	// (dest: the request's destination, "" for the server's choice)
	// under the rules c is held to (a scheduler's partitions, the
	// reservations) and returns the exec_host, or the refusal.
	Place(c *handler.Conn, j *state.Job, dest string) (execHost string, refusal *batchreq.Reply)
	// Allocate chooses the VPs of a node specification for job j on the
	// nodes up now and returns its exec_host, or the refusal.
	Allocate(j *state.Job, spec string) (execHost string, refusal *batchreq.Reply)
	// RefreshNodeJobs recomputes the nodes' jobs and the resources
	// assigned from the running jobs.
	RefreshNodeJobs()
	// NodeUp reports whether jobs may be sent to or relayed for the MOM
	// of node name.
	NodeUp(name string) bool
	// MarkNodeDown marks node name down: its MOM cannot be reached.
	MarkNodeDown(name string)

	// Shutting reports whether the server is shutting down;
	// StopStarting makes it so (no new jobs start meanwhile).
	Shutting() bool
	StopStarting()
	// SchedNotify asks the scheduler for a cycle (batchreq.SCH_*). It
	// is called without the lock.
	SchedNotify(cmd int)
}

// Config is what the link is told once, at New.
type Config struct {
	Name    string // the server's name
	Home    string // PBS_HOME (its spool directory keeps rerun jobs' output)
	MomPort int    // the MOMs' batch port
	// Clean is set for a cold or create start: a MOM's obit for a job
	// the server does not know is answered PBSE_CLEANEDOUT.
	Clean bool
	// ResolveHost, if set, maps MOM host names to addresses (tests put
	// MOMs on loopback with it).
	ResolveHost func(name string) []netip.Addr
	Log         *pbslog.Logger
	Acct        *pbslog.Accounting
	Mail        *jobmail.Mailer
	Obs         monitor.Observer
	Done        <-chan struct{} // closed when the server has shut down
}

// Link is the server's side of running jobs. Its own bookkeeping has a
// mutex of its own, never held while taking the server's lock.
type Link struct {
	host Host
	cfg  Config
	log  *pbslog.Logger
	acct *pbslog.Accounting
	mail *jobmail.Mailer
	book book
	ln   launcher

	// Dial, when set (tests), replaces the resolution of a MOM host name
	// to its address and the dialling.
	Dial func(ctx context.Context, host string) (net.Conn, error)
	// Resolve returns the addresses of a node name (tests replace it).
	Resolve func(host string) []netip.Addr
	// NannyInterval is the job nanny's period (tests shorten it).
	NannyInterval time.Duration
	// RetryDelay separates the two attempts to reach a MOM for a launch.
	RetryDelay time.Duration
	// HotStartInterval separates a hot start's attempts to run the jobs
	// requeued by an immediate shutdown on their hosts again.
	HotStartInterval time.Duration
}

var _ handler.Running = (*Link)(nil)

// New returns the link of a server seen as host.
func New(host Host, cfg Config) *Link {
	l := &Link{
		host:          host,
		cfg:           cfg,
		log:           cfg.Log,
		acct:          cfg.Acct,
		mail:          cfg.Mail,
		book:          newBook(),
		Resolve:       mom.ResolveAddr,
		NannyInterval: nannyInterval,
		RetryDelay:    2 * time.Second,

		HotStartInterval: 15 * time.Second,
	}
	if cfg.ResolveHost != nil {
		l.Resolve = cfg.ResolveHost
	}
	l.ln = launcher{l: l}
	return l
}

// logError writes a LOG_ERROR line (spec 12 §13.2).
func (l *Link) logError(fn, msg string) {
	l.log.Logf(1, "Svr", "PBS_Server", "LOG_ERROR::%s, %s", fn, msg)
}

// logOnJobExit writes TORQUE's trace of end-of-job processing.
func (l *Link) logOnJobExit(j *state.Job, sub pbsattr.Substate) {
	l.log.Logf(logline.EventJob, logline.ClassJob, "NULL", "on_job_exit valid pjob: %p (substate=%d)", j, sub)
}

// momDialer returns how the link connects to MOMs.
func (l *Link) momDialer() mom.Dialer {
	return mom.Dialer{Port: l.cfg.MomPort, Resolve: l.cfg.ResolveHost, Dial: l.Dial, Obs: l.cfg.Obs}
}

// dialMom connects to the MOM on host.
func (l *Link) dialMom(host string) (*mom.Conn, error) { return l.momDialer().Connect(host) }

// MomRequest sends one request to the MOM on host on a new connection
// and returns its reply.
func (l *Link) MomRequest(host string, typ int, body batchreq.Body, ext string) (*batchreq.Reply, error) {
	return l.momDialer().Request(host, typ, body, ext)
}

// Suspended reports whether a job is suspended by qsig -s suspend (its
// VPs are free for others meanwhile).
func (l *Link) Suspended(id string) bool { return l.book.isSuspended(id) }

// SetSuspended records that a job is (or is no longer) suspended.
func (l *Link) SetSuspended(id string, on bool) { l.book.setSuspended(id, on) }

// Poll sends a StatusJob to the MOM of each running job once every
// job_stat_rate seconds, spread by queue rank (spec 10 §7); sec counts
// the seconds since the link started. The server calls it every second.
func (l *Link) Poll(sec int64) {
	h := l.host
	h.RLock()
	attrs := h.Attrs()
	rate := attrLong(attrs, pbsattr.SrvJobStatRate, defaultJobStatRate)
	poll := attrs.Get(pbsattr.SrvPollJobs) == "" || state.IsTrue(attrs.Get(pbsattr.SrvPollJobs))
	var ids []string
	if poll && rate > 0 {
		for _, j := range h.Jobs().Holding() {
			if j.State == pbsattr.StateRunning && j.Substate == pbsattr.SubRunning && (j.Rank+sec)%rate == 0 {
				ids = append(ids, j.ID)
			}
		}
	}
	h.RUnlock()
	for _, id := range ids {
		go l.pollJob(id)
	}
}

// attrLong returns a number attribute of the server, def when unset or
// not a number.
func attrLong(attrs state.Attrs, idx int, def int64) int64 {
	if v := attrs.Get(idx); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

// book is the link's bookkeeping of jobs and MOMs, under its own mutex.
type book struct {
	mu        sync.Mutex
	suspended map[string]bool // job id → suspended by qsig -s suspend
	ending    map[string]int  // MOM host → end-of-job exchanges in progress
	deleting  map[string]bool // job id → a delete is in progress
	// stageFailed holds, by job id, the MOM's reply text of a stage-in
	// that failed during a launch, until finishRun takes it.
	stageFailed map[string]string
}

func newBook() book {
	return book{
		suspended:   make(map[string]bool),
		ending:      make(map[string]int),
		deleting:    make(map[string]bool),
		stageFailed: make(map[string]string),
	}
}

func (b *book) isSuspended(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.suspended[id]
}

func (b *book) setSuspended(id string, on bool) {
	b.mu.Lock()
	if on {
		b.suspended[id] = true
	} else {
		delete(b.suspended, id)
	}
	b.mu.Unlock()
}

// startDelete marks a job's delete as in progress; it reports false if
// one already was.
func (b *book) startDelete(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.deleting[id] {
		return false
	}
	b.deleting[id] = true
	return true
}

// forget drops the bookkeeping of a job.
func (b *book) forget(id string) {
	b.mu.Lock()
	delete(b.suspended, id)
	delete(b.deleting, id)
	b.mu.Unlock()
}

// beginEnd counts an end-of-job exchange with the MOM on host as begun;
// endJob counts it down when done.
func (b *book) beginEnd(host string) {
	b.mu.Lock()
	b.ending[host]++
	b.mu.Unlock()
}

// endDone counts an end-of-job exchange with the MOM on host as done.
func (b *book) endDone(host string) {
	b.mu.Lock()
	if b.ending[host]--; b.ending[host] <= 0 {
		delete(b.ending, host)
	}
	b.mu.Unlock()
}

// endingWith reports whether an end-of-job exchange with the MOM on host
// is in progress. The StatusJob right after a launch is skipped then:
// TORQUE talks to a MOM over one connection at a time (captures 83-85).
func (b *book) endingWith(host string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ending[host] > 0
}

// stageFailure records the reply text of a job's failed stage-in.
func (b *book) stageFailure(id, text string) {
	b.mu.Lock()
	b.stageFailed[id] = text
	b.mu.Unlock()
}

// takeStageFailure returns and forgets the reply text of the job's failed
// stage-in, if its launch had one.
func (b *book) takeStageFailure(id string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	text, ok := b.stageFailed[id]
	delete(b.stageFailed, id)
	return text, ok
}
