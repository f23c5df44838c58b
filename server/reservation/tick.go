package reservation

import (
	"fmt"
	"slices"
	"time"

	"gopbs/resv"
	"gopbs/server/store"
)

// WaitingPrefix begins the comment of a job waiting in a reservation's
// queue for the reservation to begin.
const WaitingPrefix = "Not Running: reservation "

// waitingComment is the comment of a job of e before e begins.
func (s *Service) waitingComment(e *entry) string {
	return fmt.Sprintf("%s%s begins at %s", WaitingPrefix, e.ID, e.Start.In(s.loc()).Format("Mon Jan 02 15:04:05 2006"))
}

// Tick does the reservations' timed work at the server's clock: pending
// operations past their time aborted (seed §2.4), reservations begun
// (foreign jobs on their nodes requeued, seed §2.6) and ended (their jobs
// deleted, their queues removed), usage counted, and the jobs waiting for
// a reservation commented. The server calls it about once a second; after
// a restart the first call catches up with what passed meanwhile.
func (s *Service) Tick() {
	if s == nil {
		return
	}
	s.confirmUnconfirmed()
	s.host.Lock()
	now := s.host.Now()
	var ops []store.Op
	var requeue, remove []string
	var deletes []func()
	schedule := false
	for _, e := range s.tab.list() {
		changed := false
		if e.PendingExpired(now, s.timeout()) {
			ev := resv.EvTimeout
			if !now.Before(e.Start) {
				ev = resv.EvStart
			}
			if e.State == resv.WaitCommit {
				ev = resv.EvTimeout
			}
			op := e.Pending
			if o, err := s.abort(e, ev); err == nil {
				s.host.Log(e.ID, fmt.Sprintf("pending %s aborted: not committed in time", op))
				ops = append(ops, o...)
				if s.tab.byID[e.ID] == nil {
					continue
				}
			}
		}
		switch {
		case e.State == resv.Confirmed && !now.Before(e.Start) && now.Before(e.End):
			e.State = resv.Running
			e.Usage.ActualStart = now
			e.lastUsage = now.Unix()
			s.account(resv.RecBegin, e, now)
			s.host.Log(e.ID, "reservation begins")
			for _, j := range s.host.RunningOn(e.Assigned) {
				if j.Queue != e.ID {
					requeue = append(requeue, j.ID)
					s.host.Log(e.ID, "job "+j.ID+" runs on reserved nodes: requeued")
				}
			}
			schedule, changed = true, true
		case (e.State == resv.Confirmed || e.State == resv.Running) && !now.Before(e.End):
			if e.State == resv.Running {
				s.countUsage(e, now)
				e.Usage.ActualEnd = now
			}
			e.State = resv.Done
			e.Finished = now.Unix()
			s.account(resv.RecFinished, e, now)
			s.host.Log(e.ID, "reservation ends")
			if f := s.clearQueue(e, &ops); f != nil {
				deletes = append(deletes, f)
			}
			schedule, changed = true, true
		case e.State == resv.Running:
			changed = s.countUsage(e, now)
		case e.waitsConfirmation() && !now.Before(e.End):
			// never confirmed: its window has passed
			if o, ok := s.cancelUnconfirmed(e, resv.EvEnd, now); ok {
				ops = append(ops, o...)
				s.host.Log(e.ID, "reservation ends unconfirmed: cancelled")
			}
		}
		if e.QueueMade && !e.QueueGone && (e.State == resv.Done || e.State == resv.Cancelled || e.State.Final()) {
			if o, gone := s.host.RemoveQueue(e.ID); gone {
				ops = append(ops, o...)
				e.QueueGone, changed = true, true
				remove = append(remove, e.ID)
			}
		}
		if e.State.Final() && (e.QueueGone || !e.QueueMade) || s.expired(e, now) {
			ops = append(ops, s.tab.drop(e))
			continue
		}
		if e.State == resv.Confirmed && e.QueueMade {
			text := s.waitingComment(e)
			for _, j := range s.host.QueueJobs(e.ID) {
				if !j.Running && j.Comment != text {
					ops = append(ops, s.host.SetComment(j.ID, text)...)
				}
			}
		}
		if changed {
			ops = append(ops, s.tab.put(e))
		}
	}
	var wait func() error
	if len(ops) > 0 {
		wait = s.host.Submit(ops)
	}
	s.host.Unlock()
	if wait != nil && wait() != nil {
		return // not durable: nothing is acted on; the next tick tries again
	}
	for _, id := range remove {
		s.host.Log(id, "reservation queue removed")
	}
	if len(requeue) > 0 {
		s.host.Requeue(requeue)
	}
	for _, f := range deletes {
		f()
	}
	if schedule {
		s.host.Schedule()
	}
}

// expired reports whether e ended (done or cancelled, its queue gone)
// longer than KeepEnded ago.
func (s *Service) expired(e *entry, now time.Time) bool {
	keep := s.KeepEnded
	if keep <= 0 {
		keep = DefaultKeepEnded
	}
	return (e.State == resv.Done || e.State == resv.Cancelled) && (e.QueueGone || !e.QueueMade) &&
		e.Finished > 0 && now.Unix()-e.Finished > int64(keep/time.Second)
}

// countUsage adds the node time e's running jobs used since the last
// count, and counts jobs seen running for the first time. It reports
// whether the usage changed. Called with the lock held.
func (s *Service) countUsage(e *entry, now time.Time) bool {
	t := now.Unix()
	from := e.lastUsage
	if from == 0 || from < e.Usage.ActualStart.Unix() {
		from = max(e.Usage.ActualStart.Unix(), t)
	}
	changed := false
	for _, j := range s.host.QueueJobs(e.ID) {
		if !j.Running {
			continue
		}
		if !slices.Contains(e.Seen, j.ID) {
			e.Seen = append(e.Seen, j.ID)
			e.Usage.Jobs++
			changed = true
		}
		if t > from {
			e.Usage.JobSeconds += int64(len(j.Nodes)) * (t - from)
			changed = true
		}
	}
	e.lastUsage = t
	return changed
}

// CheckRun checks that a job of queue may start now on nodes for
// walltime (0: no limit): a job of a reservation's queue only on the
// reservation's nodes while it runs; any other job only on nodes that no
// reservation holds before the job's walltime ends. It returns the
// refusal, or "". Called with the lock held.
func (s *Service) CheckRun(queue string, nodes []string, walltime time.Duration) string {
	now := s.host.Now()
	if e := s.tab.byID[queue]; e != nil && !e.State.Final() && e.QueueMade {
		switch {
		case e.State == resv.Done || e.State == resv.Cancelled || !now.Before(e.End):
			return "reservation " + e.ID + " is over"
		case e.State != resv.Running || now.Before(e.Start):
			return s.waitingComment(e)[len("Not Running: "):]
		}
		for _, n := range nodes {
			if !slices.Contains(e.Assigned, n) {
				return fmt.Sprintf("node %s is not one of reservation %s's", n, e.ID)
			}
		}
		return ""
	}
	end := now.Add(walltime)
	if walltime <= 0 {
		end = time.Unix(1<<40, 0)
	}
	for _, e := range s.tab.list() {
		if !e.Holds() || !e.Overlaps(now, end) {
			continue
		}
		for _, n := range nodes {
			if slices.Contains(e.Assigned, n) {
				return fmt.Sprintf("node %s is reserved by %s from %s", n, e.ID, e.Start.In(s.loc()).Format("Mon Jan 02 15:04:05 2006"))
			}
		}
	}
	return ""
}

// HasQueue reports whether name is the queue of a reservation and is
// there. Called with the lock held.
func (s *Service) HasQueue(name string) bool {
	if s == nil {
		return false
	}
	e := s.tab.byID[name]
	return e != nil && e.QueueMade && !e.QueueGone
}

// Usable returns which nodes a job of queue with walltime (0: no limit)
// may get when the server chooses its nodes itself (a RunJob without
// destination): CheckRun's rule as a filter, so that first-fit passes
// over reserved nodes instead of failing on them. Called with the lock
// held; the function is used under it.
func (s *Service) Usable(queue string, walltime time.Duration) func(node string) bool {
	all := func(string) bool { return true }
	if s == nil || len(s.tab.byID) == 0 {
		return all
	}
	if e := s.tab.byID[queue]; e != nil && !e.State.Final() && e.QueueMade {
		if s.CheckRun(queue, nil, walltime) != "" {
			return all // not running: CheckRun refuses the job, saying when it begins
		}
		return func(node string) bool { return slices.Contains(e.Assigned, node) }
	}
	now := s.host.Now()
	end := now.Add(walltime)
	if walltime <= 0 {
		end = time.Unix(1<<40, 0)
	}
	blocked := map[string]bool{}
	for _, e := range s.tab.byID {
		if e.Holds() && e.Overlaps(now, end) {
			for _, n := range e.Assigned {
				blocked[n] = true
			}
		}
	}
	return func(node string) bool { return !blocked[node] }
}

// confirmUnconfirmed confirms the reservations made for a partition
// while its scheduler was not running, once it runs (seed 003, interface
// 8): their nodes are assigned as at their creation, their queue made,
// and the partition's scheduler asked for a cycle. One whose nodes are no
// longer to be had is cancelled.
func (s *Service) confirmUnconfirmed() {
	s.host.RLock()
	waiting := false
	for _, e := range s.tab.list() {
		if e.waitsConfirmation() {
			if _, up := s.host.PartitionScheduler(e.Partition); up {
				waiting = true
				break
			}
		}
	}
	s.host.RUnlock()
	if !waiting {
		return
	}
	rules, err := s.host.Rules()
	if err != nil {
		return // the next tick tries again
	}
	s.host.Lock()
	now := s.host.Now()
	var ops []store.Op
	var cycles []string
	for _, e := range s.tab.list() {
		if !e.waitsConfirmation() {
			continue
		}
		sched, up := s.host.PartitionScheduler(e.Partition)
		if !up {
			continue
		}
		assigned, why := s.assign(rules, &e.Reservation, nil, now)
		if assigned == nil {
			if o, ok := s.cancelUnconfirmed(e, resv.EvCancel, now); ok {
				ops = append(ops, o...)
				s.host.Log(e.ID, "reservation cannot be confirmed: "+why+": cancelled")
			}
			continue
		}
		next, err := resv.Next(e.Status, resv.EvConfirm)
		if err != nil {
			continue
		}
		e.Status, e.Assigned = next, assigned
		ops = append(ops, s.confirmed(e, now)...)
		ops = append(ops, s.tab.put(e))
		s.host.Log(e.ID, "reservation confirmed: scheduler "+sched+" of partition "+e.Partition+" runs")
		if !slices.Contains(cycles, sched) {
			cycles = append(cycles, sched)
		}
	}
	var wait func() error
	if len(ops) > 0 {
		wait = s.host.Submit(ops)
	}
	s.host.Unlock()
	if wait != nil && wait() != nil {
		return
	}
	for _, name := range cycles {
		s.host.ScheduleFor(name)
	}
}

// waitsConfirmation reports whether e is unconfirmed with no operation
// pending: the reservations confirmUnconfirmed looks at.
func (e *entry) waitsConfirmation() bool {
	return e.State == resv.Unconfirmed && e.Pending == resv.OpNone
}

// cancelUnconfirmed moves an unconfirmed e through event ev (its end, or
// a cancel when it cannot be confirmed) to Cancelled by the state
// machine, and returns finish's store operations. Called with the lock
// held.
func (s *Service) cancelUnconfirmed(e *entry, ev resv.Event, now time.Time) ([]store.Op, bool) {
	next, err := resv.Next(e.Status, ev)
	if err != nil || next.State != resv.Cancelled {
		return nil, false
	}
	e.Status = next
	ops, _ := s.finish(e, now)
	return ops, true
}
