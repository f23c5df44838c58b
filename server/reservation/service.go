package reservation

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopbs/batchreq"
	"gopbs/resv"
	"gopbs/sched/config"
	"gopbs/sched/reservable"
	"gopbs/server/handler"
	"gopbs/server/store"
)

// Job is what the service knows of a job: enough to comment, requeue or
// delete it and to count a reservation's usage.
type Job struct {
	ID      string
	Queue   string
	Running bool     // running (or exiting) on Nodes
	Nodes   []string // nodes it runs on, one entry per node
	Comment string
}

// Host is what the service needs of the server. Methods marked "locked"
// are called with the server's lock held (Lock); the others without it.
type Host interface {
	// Lock and Unlock guard the server's state, the reservation table
	// included; RLock and RUnlock a read of it.
	Lock()
	Unlock()
	RLock()
	RUnlock()
	// Now is the server's clock.
	Now() time.Time
	// Nodes returns the execution nodes in the server's order, as the
	// reservability policy sees them (locked).
	Nodes() []*reservable.Node
	// Rules returns the site's reservation rules (sched_priv's
	// reservable.ad and NodeSortKey).
	Rules() (Rules, error)
	// UserExists reports whether name is a user of this host.
	UserExists(name string) bool
	// Submit submits a store batch (locked) and returns the function
	// waiting until it is durable.
	Submit(ops []store.Op) (wait func() error)
	// Account writes an accounting record of type typ for id (locked).
	Account(typ byte, id, msg string)
	// Log writes a server log line about reservation id.
	Log(id, msg string)
	// EnsureQueue creates the execution queue name, started and enabled,
	// whose user ACL is users and whose partition is partition (none if
	// ""), or sets the ACL and partition of the existing one (locked).
	EnsureQueue(name string, users []string, partition string) []store.Op
	// RemoveQueue removes queue name if it has no jobs (locked); it
	// reports whether the queue is gone (or never existed).
	RemoveQueue(name string) ([]store.Op, bool)
	// QueueJobs returns the jobs of queue name that are not complete
	// (locked).
	QueueJobs(name string) []Job
	// RunningOn returns the running jobs that use any of nodes (locked).
	RunningOn(nodes []string) []Job
	// SetComment sets a job's comment (locked).
	SetComment(id, text string) []store.Op
	// Requeue stops running jobs and puts them back in their queues, as
	// qrerun does; Delete deletes jobs as qdel does, with its mail and
	// accounting, why being the requester named.
	Requeue(ids []string)
	Delete(ids []string, why string)
	// Schedule asks the scheduler for a cycle.
	Schedule()
	// PartitionScheduler returns the scheduler serving partition p (""
	// when none does) and whether it runs (its state is not DOWN).
	PartitionScheduler(p string) (name string, up bool)
	// ScheduleFor asks scheduler name for a cycle.
	ScheduleFor(name string)
}

// Rules are the site's rules for choosing a reservation's nodes.
type Rules struct {
	// Policy is the reservability policy (reservable.ad; the policy
	// without custom conditions when there is none).
	Policy *reservable.Policy
	// NodeOrder orders the candidate nodes (PluS's NodeSortKey); none
	// keeps the server's order.
	NodeOrder []config.NodeSortKey
}

// DefaultKeepEnded is how long ended reservations are kept by default.
const DefaultKeepEnded = 7 * 24 * time.Hour

// Service serves the reservation requests over a Host. Its table is
// guarded by the Host's lock.
type Service struct {
	host Host
	tab  Table
	// CommitTimeout is how long a -T operation waits for its commit
	// (resv.DefaultCommitTimeout when zero).
	CommitTimeout time.Duration
	// ExpiredShown is how many ended reservations plus_status shows by
	// default (-ne absent).
	ExpiredShown int
	// KeepEnded is how long a done or cancelled reservation stays in the
	// table (DefaultKeepEnded when zero); its records stay in the
	// accounting files, which plus_account reads.
	KeepEnded time.Duration
	// Location is the time zone of refusal texts (time.Local when nil).
	Location *time.Location
}

// New returns the service over host with its table read from st.
func New(host Host, st store.Store) (*Service, error) {
	s := &Service{host: host, ExpiredShown: 10}
	if err := s.tab.Load(st); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Service) loc() *time.Location {
	if s.Location != nil {
		return s.Location
	}
	return time.Local
}

func (s *Service) timeout() time.Duration {
	if s.CommitTimeout > 0 {
		return s.CommitTimeout
	}
	return resv.DefaultCommitTimeout
}

// QueueOf returns the reservation whose queue is name and whether jobs
// may run in it at now: its state Running and now within its window.
// Called with the lock held.
func (s *Service) QueueOf(name string) (r *resv.Reservation, active bool) {
	e := s.tab.byID[name]
	if e == nil || e.QueueGone {
		return nil, false
	}
	now := s.host.Now()
	return &e.Reservation, e.State == resv.Running && !now.Before(e.Start) && now.Before(e.End)
}

// commit submits ops under the lock, unlocks, waits for them and answers
// p; after runs once they are durable (actions on jobs).
func (s *Service) commit(w handler.ReplyWriter, ops []store.Op, p *batchreq.Reply, after func()) {
	var wait func() error
	if len(ops) > 0 {
		wait = s.host.Submit(ops)
	}
	s.host.Unlock()
	if wait != nil {
		if err := wait(); err != nil {
			w.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save reservation"))
			return
		}
	}
	w.Send(p)
	if after != nil {
		after()
	}
}

func reject(w handler.ReplyWriter, code int, format string, a ...any) {
	w.Reject(code, fmt.Sprintf(format, a...))
}

func getter(l batchreq.AttrList) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i := len(l) - 1; i >= 0; i-- {
			if l[i].Name == name {
				return l[i].Value, true
			}
		}
		return "", false
	}
}

// Submit serves ResvSubmit (plus_reserve).
func (s *Service) Submit(w handler.ReplyWriter, who handler.Asker, b *batchreq.ResvSubmit) {
	r, err := resv.FromAttrs("", getter(b.Attrs))
	if err != nil {
		reject(w, batchreq.PBSE_BADATVAL, "%v", err)
		return
	}
	r.Owner = who.User
	now := s.host.Now()
	if err := r.Validate(now); err != nil {
		reject(w, batchreq.PBSE_BADATVAL, "%v", err)
		return
	}
	if r.Start.Before(now) {
		r.Start = now
	}
	for _, u := range r.Users {
		if !s.host.UserExists(u) {
			reject(w, batchreq.PBSE_BADUSER, "unknown user %s", u)
			return
		}
	}
	rules, err := s.host.Rules()
	if err != nil {
		reject(w, batchreq.PBSE_SYSTEM, "%v", err)
		return
	}
	s.host.Lock()
	if why := s.unknownPartition(r.Partition); why != "" {
		s.host.Unlock()
		reject(w, batchreq.PBSE_BADATVAL, "%s", why)
		return
	}
	id, num, counter := s.tab.newID()
	r.ID = id
	assigned, why := s.assign(rules, r, nil, now)
	if assigned == nil {
		s.tab.next-- // nothing was made: the number is not used
		s.host.Unlock()
		reject(w, batchreq.PBSE_RESCUNAV, "%s", why)
		return
	}
	r.Assigned = assigned
	r.Created = now
	e := &entry{record: record{Reservation: *r}, num: num}
	ops := []store.Op{counter}
	var after func()
	sched, up := "", false
	if r.Partition != "" {
		sched, up = s.host.PartitionScheduler(r.Partition)
	}
	switch {
	case r.Partition != "" && !up && b.Flags&batchreq.ResvFlagTransaction == 0:
		// Seed 003, interface 8: the partition's scheduler is not
		// running; the reservation is kept, unconfirmed and holding no
		// nodes, until the server reaches it (confirmUnconfirmed).
		e.State, e.Assigned = resv.Unconfirmed, nil
		s.host.Log(id, "reservation made at request of "+who.Requester()+", UNCONFIRMED: "+schedulerDown(sched, r.Partition))
	case b.Flags&batchreq.ResvFlagTransaction != 0:
		e.State, e.Pending, e.PendingSince = resv.WaitCommit, resv.OpCreate, now
		s.host.Log(id, "reservation made at request of "+who.Requester()+", waiting for commit")
	default:
		e.State = resv.Confirmed
		ops = append(ops, s.confirmed(e, now)...)
		s.host.Log(id, "reservation made at request of "+who.Requester())
		if sched != "" {
			// the partition's scheduler books it at once
			after = func() { s.host.ScheduleFor(sched) }
		}
	}
	ops = append(ops, s.tab.put(e))
	s.commit(w, ops, batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, id), after)
}

// unknownPartition says why partition p (plus_reserve or
// plus_availnodes -partition) is refused: no node is in it. It returns ""
// for a partition some node is in, and for none (""). Called with the
// lock held.
func (s *Service) unknownPartition(p string) string {
	if p == "" || slices.ContainsFunc(s.host.Nodes(), func(n *reservable.Node) bool { return n.Partition == p }) {
		return ""
	}
	return "unknown partition " + p + ": no node is in it"
}

// schedulerDown says why a reservation for partition p is unconfirmed.
func schedulerDown(sched, p string) string {
	if sched == "" {
		return "no scheduler serves partition " + p
	}
	return "scheduler " + sched + " of partition " + p + " is not running"
}

// confirmed does what a reservation's confirmation does: its queue, its
// Y record. Called with the lock held.
func (s *Service) confirmed(e *entry, now time.Time) []store.Op {
	ops := s.host.EnsureQueue(e.ID, e.aclUsers(), e.Partition)
	e.QueueMade = true
	s.account(resv.RecConfirmed, e, now)
	return ops
}

func (e *entry) aclUsers() []string {
	return append([]string{e.Owner}, slices.DeleteFunc(slices.Clone(e.Users), func(u string) bool { return u == e.Owner })...)
}

// account writes r's record of type typ.
func (s *Service) account(typ byte, e *entry, now time.Time) {
	line := resv.NewRecord(typ, &e.Reservation, now).Line()
	// Line is "date;type;id;message": the accounting file writes the
	// first three itself.
	parts := strings.SplitN(line, ";", 4)
	msg := ""
	if len(parts) == 4 {
		msg = parts[3]
	}
	s.host.Account(typ, e.ID, msg)
}

// target finds the reservation of a request and checks who may change
// it. Called with the lock held; on failure it unlocks and answers.
func (s *Service) target(w handler.ReplyWriter, who handler.Asker, id string) *entry {
	e := s.tab.get(id)
	if e == nil {
		s.host.Unlock()
		reject(w, batchreq.PBSE_UNKJOBID, "unknown reservation %s", id)
		return nil
	}
	if !e.MayChange(who.User, who.Manager) {
		s.host.Unlock()
		reject(w, batchreq.PBSE_PERM, "reservation %s belongs to %s: only its owner or a manager may change it", e.ID, e.Owner)
		return nil
	}
	return e
}

func transitionCode(err error) int {
	if errors.Is(err, resv.ErrGone) {
		return batchreq.PBSE_UNKJOBID
	}
	return batchreq.PBSE_BADSTATE
}

// Commit serves ResvCommit (plus_commit).
func (s *Service) Commit(w handler.ReplyWriter, who handler.Asker, b *batchreq.ResvID) {
	s.host.Lock()
	e := s.target(w, who, b.ID)
	if e == nil {
		return
	}
	next, err := resv.Next(e.Status, resv.EvCommit)
	if err != nil {
		s.host.Unlock()
		reject(w, transitionCode(err), "%s: %v", e.ID, err)
		return
	}
	now := s.host.Now()
	var ops []store.Op
	var after func()
	switch e.Pending {
	case resv.OpModify:
		if why := s.applyChange(e, e.Change, now); why != "" {
			s.host.Unlock()
			reject(w, batchreq.PBSE_RESCUNAV, "%s", why)
			return
		}
		ops = append(ops, s.host.EnsureQueue(e.ID, e.aclUsers(), e.Partition)...)
	}
	op := e.Pending
	e.Status, e.Change, e.PendingSince = next, nil, time.Time{}
	switch op {
	case resv.OpCreate:
		ops = append(ops, s.confirmed(e, now)...)
		ops = append(ops, s.tab.put(e))
	case resv.OpModify:
		s.account(resv.RecModified, e, now)
		ops = append(ops, s.tab.put(e))
	case resv.OpCancel, resv.OpDestroy:
		var o []store.Op
		o, after = s.finish(e, now)
		ops = append(ops, o...)
	}
	s.host.Log(e.ID, fmt.Sprintf("%s committed at request of %s", op, who.Requester()))
	s.commit(w, ops, batchreq.NullReply(), after)
}

// Abort serves ResvAbort (plus_abort).
func (s *Service) Abort(w handler.ReplyWriter, who handler.Asker, b *batchreq.ResvID) {
	s.host.Lock()
	e := s.target(w, who, b.ID)
	if e == nil {
		return
	}
	ops, err := s.abort(e, resv.EvAbort)
	if err != nil {
		s.host.Unlock()
		reject(w, transitionCode(err), "%s: %v", e.ID, err)
		return
	}
	s.host.Log(e.ID, fmt.Sprintf("pending operation aborted at request of %s", who.Requester()))
	s.commit(w, ops, batchreq.NullReply(), nil)
}

// abort drops e's pending operation (ev EvAbort or EvTimeout); an
// uncommitted creation removes the reservation. Called with the lock.
func (s *Service) abort(e *entry, ev resv.Event) ([]store.Op, error) {
	next, err := resv.Next(e.Status, ev)
	if err != nil {
		return nil, err
	}
	if next.State == resv.Aborted {
		return []store.Op{s.tab.drop(e)}, nil
	}
	e.Status, e.Change, e.PendingSince = next, nil, time.Time{}
	return []store.Op{s.tab.put(e)}, nil
}

// Modify serves ResvModify (plus_modify).
func (s *Service) Modify(w handler.ReplyWriter, who handler.Asker, b *batchreq.ResvModify) {
	c, err := resv.ChangeFromAttrs(getter(b.Attrs))
	if err != nil {
		reject(w, batchreq.PBSE_BADATVAL, "%v", err)
		return
	}
	for _, u := range c.Users {
		if !s.host.UserExists(u) {
			reject(w, batchreq.PBSE_BADUSER, "unknown user %s", u)
			return
		}
	}
	s.host.Lock()
	e := s.target(w, who, b.ID)
	if e == nil {
		return
	}
	now := s.host.Now()
	tx := b.Flags&batchreq.ResvFlagTransaction != 0
	ev := resv.EvModify
	if tx {
		ev = resv.EvModifyT
	}
	next, err := resv.Next(e.Status, ev)
	if err == nil {
		err = e.ValidateChange(c, now)
	}
	if err != nil {
		s.host.Unlock()
		reject(w, transitionCode(err), "%s: %v", e.ID, err)
		return
	}
	if tx {
		// checked now, applied (and checked again) at the commit
		probe := *e
		if why := s.applyChange(&probe, c, now); why != "" {
			s.host.Unlock()
			reject(w, batchreq.PBSE_RESCUNAV, "%s", why)
			return
		}
		e.Status, e.Change, e.PendingSince = next, c, now
		s.host.Log(e.ID, "modify at request of "+who.Requester()+", waiting for commit")
		s.commit(w, []store.Op{s.tab.put(e)}, batchreq.NullReply(), nil)
		return
	}
	if why := s.applyChange(e, c, now); why != "" {
		s.host.Unlock()
		reject(w, batchreq.PBSE_RESCUNAV, "%s", why)
		return
	}
	s.account(resv.RecModified, e, now)
	ops := s.host.EnsureQueue(e.ID, e.aclUsers(), e.Partition)
	s.host.Log(e.ID, "modified at request of "+who.Requester())
	s.commit(w, append(ops, s.tab.put(e)), batchreq.NullReply(), nil)
}

// applyChange applies c to e if the nodes allow it: the nodes already
// assigned that stay free in the new window are kept, others added or
// dropped to the new count. It returns why not, or "". Called with the
// lock held.
func (s *Service) applyChange(e *entry, c *resv.Change, now time.Time) string {
	next := e.Reservation
	next.Apply(c)
	if next.Start.Equal(e.Start) && next.End.Equal(e.End) && next.Wanted() == len(e.Assigned) {
		e.Reservation = next
		return ""
	}
	rules, err := s.host.Rules()
	if err != nil {
		return err.Error()
	}
	assigned, why := s.assign(rules, &next, e.Assigned, now)
	if assigned == nil {
		return why
	}
	next.Assigned = assigned
	e.Reservation = next
	return ""
}

// Cancel serves ResvCancel (plus_cancel) and Destroy ResvDestroy
// (plus_destroy): one reservation, or with an owner and no id every
// reservation of that owner that is not over.
func (s *Service) Cancel(w handler.ReplyWriter, who handler.Asker, b *batchreq.ResvID) {
	s.end(w, who, b, resv.EvCancel, resv.EvCancelT)
}

// Destroy serves ResvDestroy (plus_destroy).
func (s *Service) Destroy(w handler.ReplyWriter, who handler.Asker, b *batchreq.ResvID) {
	s.end(w, who, b, resv.EvDestroy, resv.EvDestroyT)
}

func (s *Service) end(w handler.ReplyWriter, who handler.Asker, b *batchreq.ResvID, ev, evT resv.Event) {
	tx := b.Flags&batchreq.ResvFlagTransaction != 0
	if b.ID == "" {
		s.endOwner(w, who, b.Owner, tx, ev)
		return
	}
	s.host.Lock()
	e := s.target(w, who, b.ID)
	if e == nil {
		return
	}
	use := ev
	if tx {
		use = evT
	}
	next, err := resv.Next(e.Status, use)
	if err != nil {
		s.host.Unlock()
		reject(w, transitionCode(err), "%s: %v", e.ID, err)
		return
	}
	now := s.host.Now()
	if tx {
		e.Status, e.PendingSince = next, now
		s.host.Log(e.ID, fmt.Sprintf("%s at request of %s, waiting for commit", next.Pending, who.Requester()))
		s.commit(w, []store.Op{s.tab.put(e)}, batchreq.NullReply(), nil)
		return
	}
	e.Status = next
	s.host.Log(e.ID, fmt.Sprintf("%s at request of %s", strings.ToLower(next.State.String()), who.Requester()))
	ops, after := s.finish(e, now)
	s.commit(w, ops, batchreq.NullReply(), after)
}

// endOwner cancels or destroys every reservation of owner that the event
// applies to (-o owner; -T is refused, seed §2.4).
func (s *Service) endOwner(w handler.ReplyWriter, who handler.Asker, owner string, tx bool, ev resv.Event) {
	switch {
	case owner == "":
		reject(w, batchreq.PBSE_IVALREQ, "no reservation id and no owner")
		return
	case tx:
		reject(w, batchreq.PBSE_IVALREQ, "-T cannot be used with -o owner")
		return
	case owner != who.User && !who.Manager:
		reject(w, batchreq.PBSE_PERM, "only %s or a manager may change %s's reservations", owner, owner)
		return
	}
	s.host.Lock()
	now := s.host.Now()
	var ops []store.Op
	var afters []func()
	for _, e := range s.tab.list() {
		if e.Owner != owner {
			continue
		}
		next, err := resv.Next(e.Status, ev)
		if err != nil || next == e.Status {
			continue
		}
		e.Status = next
		s.host.Log(e.ID, fmt.Sprintf("%s at request of %s", strings.ToLower(next.State.String()), who.Requester()))
		o, after := s.finish(e, now)
		ops = append(ops, o...)
		if after != nil {
			afters = append(afters, after)
		}
	}
	s.commit(w, ops, batchreq.NullReply(), func() {
		for _, f := range afters {
			f()
		}
	})
}

// finish does the work of e's new state Cancelled or Destroyed: the
// record (K or X), the reservation's jobs deleted and its queue removed
// once empty, the record dropped when destroyed. It returns the store
// operations and the actions on jobs to run once they are durable.
// Called with the lock held.
func (s *Service) finish(e *entry, now time.Time) ([]store.Op, func()) {
	e.Change, e.PendingSince = nil, time.Time{}
	wasRunning := !e.Usage.ActualStart.IsZero() && e.Usage.ActualEnd.IsZero()
	if wasRunning {
		s.countUsage(e, now)
		e.Usage.ActualEnd = now
	}
	var ops []store.Op
	after := s.clearQueue(e, &ops)
	switch e.State {
	case resv.Cancelled:
		s.account(resv.RecCancelled, e, now)
		e.Finished = now.Unix()
		ops = append(ops, s.tab.put(e))
	case resv.Destroyed:
		s.account(resv.RecDestroyed, e, now)
		if e.QueueMade && !e.QueueGone {
			// kept, unseen, until Tick has removed its queue
			ops = append(ops, s.tab.put(e))
		} else {
			ops = append(ops, s.tab.drop(e))
		}
	}
	return ops, after
}

// clearQueue deletes the jobs of e's queue (the returned action) and
// removes the queue if it is empty already; otherwise Tick removes it
// once the jobs are gone. Called with the lock held.
func (s *Service) clearQueue(e *entry, ops *[]store.Op) func() {
	if !e.QueueMade || e.QueueGone {
		return nil
	}
	var ids []string
	for _, j := range s.host.QueueJobs(e.ID) {
		ids = append(ids, j.ID)
	}
	if len(ids) == 0 {
		o, gone := s.host.RemoveQueue(e.ID)
		*ops = append(*ops, o...)
		e.QueueGone = gone
		return nil
	}
	return func() { s.host.Delete(ids, "reservation "+e.ID) }
}
