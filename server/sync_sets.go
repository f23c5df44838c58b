package server

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/link/remote"
	"gopbs/server/state"
	"gopbs/server/store"
	"gopbs/server/syncset"
)

// Sync sets (seed 001, Synchronize Job Starts) are kept by package
// syncset; this file ties its table to the jobs, the store and the other
// servers. The master's server keeps the set: members on this server
// register as they enter an execution queue, members on other servers
// through RegisterDependency (Register, with the member's cost). Once
// every member registered, the cheapest is released (its system hold
// removed: locally, or by a RegisterDependency Release to its server);
// when a released job starts, its server reports Ready and the next
// cheapest is released. Costs follow the job's own server's
// resources_cost and system_cost.

// syncKey is the sync-set table's key in store.Server.
const syncKey = "syncsets"

// loadSyncSets reads the sync-set table at start-up.
func (s *Server) loadSyncSets() error {
	b, err := s.store.Get(store.Server, syncKey)
	if err != nil {
		return fmt.Errorf("read sync sets: %w", err)
	}
	if err := s.sync.table.Decode(b); err != nil {
		return fmt.Errorf("sync sets: %w", err)
	}
	return nil
}

// saveSyncSets queues the table's write. The store applies writes in
// order, so a reply whose own commit follows is durable only with it.
// Called with s.mu held.
func (s *Server) saveSyncSets() {
	s.store.Submit(store.Put(store.Server, syncKey, s.sync.table.Encode()))
}

// syncSelf is how other servers reach this one: its name, with the port
// when it is not the standard one.
func (s *Server) syncSelf() string {
	if a, ok := s.Addr().(*net.TCPAddr); ok && a.Port != batchreq.PBS_BATCH_SERVICE_PORT {
		return s.name + ":" + strconv.Itoa(a.Port)
	}
	return s.name
}

// syncPrices are the server's resources_cost and system_cost.
func (s *Server) syncPrices() syncset.Prices {
	p := syncset.Prices{PerUnit: map[string]int64{}}
	for _, v := range s.attrs.Resources(pbsattr.SrvResourcesCost) {
		if n, ok := syncset.ParsePrice(v.Value); ok {
			p.PerUnit[v.Resource] = n
		}
	}
	p.System, _ = syncset.ParsePrice(s.attrs.Get(pbsattr.SrvSystemCost))
	return p
}

// syncCost is the resource cost of job j on this server.
func (s *Server) syncCost(j *state.Job) int64 {
	var req []syncset.Resource
	for _, v := range j.Attrs.Resources(pbsattr.JobResourceList) {
		t := pbsattr.TypeString
		if d, ok := state.Resources[v.Resource]; ok {
			t = d.Type
		}
		req = append(req, syncset.Resource{Name: v.Resource, Type: t, Value: v.Value})
	}
	return s.syncPrices().Cost(req)
}

// syncCount returns the synccount of j, if it is a sync master.
func (s *Server) syncCount(j *state.Job) (int, bool) {
	for _, e := range s.jobDeps(j) {
		if e.typ == "synccount" && len(e.args) == 1 {
			n, err := strconv.Atoi(e.args[0])
			return n, err == nil
		}
	}
	return 0, false
}

// syncOpen records the set of master j entering an execution queue and
// releases what that allows. It returns the local jobs changed. Called
// with s.mu held.
func (s *Server) syncOpen(j *state.Job) []*state.Job {
	n, ok := s.syncCount(j)
	if !ok {
		return nil
	}
	rel := s.sync.table.Open(j.ID, j.ID+"@"+s.name, n, s.syncCost(j))
	s.saveSyncSets()
	return s.syncRelease(j.ID, rel)
}

// syncRegisterLocal registers member j with master m, both on this
// server. Called with s.mu held.
func (s *Server) syncRegisterLocal(m, j *state.Job) (changed []*state.Job, code int) {
	if _, ok := s.syncCount(m); !ok {
		return nil, batchreq.PBSE_NOSYNCMSTR
	}
	if _, ok := s.sync.table.Set(m.ID); !ok {
		// a master queued before this server kept sets, or outside
		// an execution queue: open its set now
		changed = s.syncOpen(m)
	}
	ref := j.ID + "@" + s.name
	s.addDep(m, "syncwith", ref)
	s.touch(m)
	rel, err := s.sync.table.Register(m.ID, ref, s.syncCost(j))
	if err != nil {
		return changed, batchreq.PBSE_NOSYNCMSTR
	}
	s.saveSyncSets()
	return append(append(changed, m), s.syncRelease(m.ID, rel)...), 0
}

// syncRelease releases the members rel of master's set: a local job loses
// the system hold of its sync dependency and awaits its start; a job on
// another server is released by a RegisterDependency Release. It returns
// the local jobs changed. Called with s.mu held.
func (s *Server) syncRelease(master string, rel []string) []*state.Job {
	var changed []*state.Job
	masterRef := master + "@" + s.syncSelf()
	for _, ref := range rel {
		id, local := s.localJobID(ref)
		if !local {
			id = jobPart(ref)
			s.log.Logf(logline.EventJob, logline.ClassJob, master, "sync set: releasing %s", ref)
			s.syncSend(ref, &batchreq.RegistDep{ParentID: id, ChildID: masterRef,
				DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_RELEASE})
			continue
		}
		j := s.findJob(id)
		if j == nil {
			continue
		}
		s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "sync set of %s: released", master)
		if j.ID == master {
			s.dropSyncDeps(j, "")
		} else {
			s.dropSyncDeps(j, master)
		}
		s.sync.table.Await(j.ID, master+"@"+s.name)
		s.releaseDepHold(j)
		changed = append(changed, j)
	}
	if len(rel) > 0 {
		s.saveSyncSets()
	}
	return changed
}

// dropSyncDeps removes j's syncwith entries naming master (a job id, any
// server part), or, for master "", j's own synccount and syncwith
// entries (j is the master).
func (s *Server) dropSyncDeps(j *state.Job, master string) {
	deps := s.jobDeps(j)
	kept := deps[:0]
	for _, e := range deps {
		switch {
		case master == "" && (e.typ == "synccount" || e.typ == "syncwith"):
			continue
		case master != "" && e.typ == "syncwith":
			var args []string
			for _, a := range e.args {
				if id, _, _ := strings.Cut(a, "@"); id != master {
					args = append(args, a)
				}
			}
			e.args = args
		}
		kept = append(kept, e)
	}
	s.setDeps(j, kept)
	s.touch(j)
}

// syncRegisterRemote asks the server of master ("id@server") to register
// member j, with its cost. Called with s.mu held.
func (s *Server) syncRegisterRemote(j *state.Job, master string) {
	s.syncSend(master, &batchreq.RegistDep{Owner: j.OwnerUser(), ParentID: jobPart(master), ChildID: j.ID + "@" + s.syncSelf(),
		DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_REGISTER, Cost: s.syncCost(j)})
}

// syncStarted reports the start of job j to its sync master, if it was
// released from a set, and returns the local jobs changed (the next
// release when the master is here). Called with s.mu held.
func (s *Server) syncStarted(j *state.Job) []*state.Job {
	master, ok := s.sync.table.Started(j.ID)
	if !ok {
		return nil
	}
	s.saveSyncSets()
	id, local := s.localJobID(master)
	ref := j.ID + "@" + s.name
	if !local {
		id = jobPart(master)
		s.syncSend(master, &batchreq.RegistDep{Owner: j.OwnerUser(), ParentID: id, ChildID: j.ID + "@" + s.syncSelf(),
			DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_READY})
		return nil
	}
	s.log.Logf(logline.EventJob, logline.ClassJob, id, "sync set: %s is ready", ref)
	return s.syncRelease(id, s.sync.table.Ready(id, ref))
}

// syncGone handles the end of job j (deleted, aborted or finished) for
// the sync sets: a master's members that have not started are aborted
// (seed 001: local ones are returned as doomed, others get a
// RegisterDependency Delete); a member leaves its master's set.
// Called with s.mu held.
func (s *Server) syncGone(j *state.Job) (changed, doomed []*state.Job) {
	if waited, ok := s.sync.table.Started(j.ID); ok {
		s.leaveSet(j, waited)
	}
	if _, master := s.syncCount(j); !master {
		// a member not released yet: its syncwith entry names the master
		// (a master's own syncwith entries are its members)
		for _, e := range s.jobDeps(j) {
			if e.typ == "syncwith" {
				for _, m := range e.args {
					changed = append(changed, s.leaveSet(j, m)...)
				}
			}
		}
	}
	if _, ok := s.sync.table.Set(j.ID); !ok {
		return changed, doomed
	}
	masterRef := j.ID + "@" + s.syncSelf()
	for _, ref := range s.sync.table.Abort(j.ID) {
		id, local := s.localJobID(ref)
		if !local {
			id = jobPart(ref)
			s.syncSend(ref, &batchreq.RegistDep{Owner: j.OwnerUser(), ParentID: id, ChildID: masterRef,
				DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_DELETE})
			continue
		}
		if c := s.findJob(id); c != nil && c != j && c.State != pbsattr.StateComplete && c.State != pbsattr.StateRunning {
			doomed = append(doomed, c)
		}
	}
	s.saveSyncSets()
	return changed, doomed
}

// leaveSet takes job j out of the set of master ("id@server").
func (s *Server) leaveSet(j *state.Job, master string) []*state.Job {
	id, local := s.localJobID(master)
	if !local {
		id = jobPart(master)
		s.syncSend(master, &batchreq.RegistDep{Owner: j.OwnerUser(), ParentID: id, ChildID: j.ID + "@" + s.syncSelf(),
			DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_UNREG})
		return nil
	}
	rel := s.sync.table.Leave(id, j.ID+"@"+s.name)
	s.saveSyncSets()
	return s.syncRelease(id, rel)
}

// handleSyncDep serves a RegisterDependency of type syncwith from
// another server: Register and Ready (and Unregister) for a master here,
// Release and Delete for a member here.
func (s *Server) handleSyncDep(c *handler.Conn, body *batchreq.RegistDep) {
	s.mu.Lock()
	j := s.findJob(body.ParentID)
	if j == nil {
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_UNKJOBID, "")
		return
	}
	var changed []*state.Job
	var ops []store.Op
	switch body.Op {
	case batchreq.JOB_DEPEND_OP_REGISTER:
		if _, ok := s.syncCount(j); !ok {
			s.mu.Unlock()
			c.Reject(batchreq.PBSE_NOSYNCMSTR, "")
			return
		}
		if _, ok := s.sync.table.Set(j.ID); !ok {
			changed = s.syncOpen(j)
		}
		rel, err := s.sync.table.Register(j.ID, body.ChildID, body.Cost)
		if err != nil {
			s.mu.Unlock()
			c.Reject(batchreq.PBSE_IVALREQ, "")
			return
		}
		s.addDep(j, "syncwith", body.ChildID)
		s.touch(j)
		s.saveSyncSets()
		changed = append(append(changed, j), s.syncRelease(j.ID, rel)...)
	case batchreq.JOB_DEPEND_OP_READY:
		changed = s.syncRelease(j.ID, s.sync.table.Ready(j.ID, body.ChildID))
	case batchreq.JOB_DEPEND_OP_UNREG:
		rel := s.sync.table.Leave(j.ID, body.ChildID)
		s.saveSyncSets()
		changed = s.syncRelease(j.ID, rel)
	case batchreq.JOB_DEPEND_OP_RELEASE:
		// Ready goes to the master's server as this job's syncwith
		// names it (which reached it at registration)
		master, _, _ := strings.Cut(body.ChildID, "@")
		ref := body.ChildID
		for _, e := range s.jobDeps(j) {
			for _, a := range e.args {
				if id, _, _ := strings.Cut(a, "@"); e.typ == "syncwith" && id == master {
					ref = a
				}
			}
		}
		s.dropSyncDeps(j, master)
		s.sync.table.Await(j.ID, ref)
		s.saveSyncSets()
		s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "sync set of %s: released", body.ChildID)
		s.releaseDepHold(j)
		changed = []*state.Job{j}
	case batchreq.JOB_DEPEND_OP_DELETE:
		if j.State == pbsattr.StateRunning || j.State == pbsattr.StateComplete {
			break
		}
		s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job deleted as result of dependency on job %s", body.ChildID)
		tx := s.db.Begin()
		s.completeJob(tx, j, false)
		ops = append(ops, tx.Ops()...)
	default:
		s.mu.Unlock()
		c.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	for _, x := range changed {
		if s.jobs.Get(x.ID) == x {
			ops = append(ops, state.SaveJob(x))
		}
	}
	s.commitAndReply(c, ops, batchreq.NullReply())
}

// syncState is the sync-set table and the delivery state of its
// outbox (not stored: a restart retries every message at once).
type syncState struct {
	table syncset.Table
	busy  map[uint64]bool      // messages being sent
	next  map[uint64]time.Time // earliest time of the next attempt
	tries map[uint64]int       // failed attempts
}

// syncSend queues a RegisterDependency for the server named in ref
// ("id@server[:port]") in the table's outbox, stored with the table, and
// starts its delivery. Called with s.mu held.
func (s *Server) syncSend(ref string, body *batchreq.RegistDep) {
	_, srv, _ := strings.Cut(ref, "@")
	seq := s.sync.table.Post(syncset.Message{To: srv, Op: body.Op, Owner: body.Owner, Parent: body.ParentID, Child: body.ChildID, Cost: body.Cost})
	if seq == 0 {
		s.log.Logf(logline.EventJob, logline.ClassJob, body.ParentID, "sync set: cannot send to server %q", srv)
		return
	}
	s.saveSyncSets()
	s.syncDeliverLocked()
}

// syncDeliver starts the delivery of the outbox messages that are due
// (the server's timer calls it every second).
func (s *Server) syncDeliver() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncDeliverLocked()
}

// syncDeliverLocked is syncDeliver with s.mu held. A failed attempt is
// tried again after a delay that doubles up to a minute; a refused
// message is dropped (a refused Register puts its member on user hold,
// as a refused local registration does).
func (s *Server) syncDeliverLocked() {
	if s.shutting {
		return
	}
	now := time.Now()
	for _, m := range s.sync.table.Outbox() {
		if s.sync.busy[m.Seq] || now.Before(s.sync.next[m.Seq]) {
			continue
		}
		dest := s.router.Destination("x@" + m.To)
		if dest.Addr == "" || dest.Bad {
			s.log.Logf(logline.EventJob, logline.ClassJob, m.Parent, "sync set: cannot reach server %q", m.To)
			s.sync.table.Delivered(m.Seq)
			s.saveSyncSets()
			continue
		}
		if s.sync.busy == nil {
			s.sync.busy, s.sync.next, s.sync.tries = map[uint64]bool{}, map[uint64]time.Time{}, map[uint64]int{}
		}
		s.sync.busy[m.Seq] = true
		go s.syncAttempt(m, dest.Addr)
	}
}

// syncAttempt sends one outbox message once.
func (s *Server) syncAttempt(m syncset.Message, addr string) {
	p, err := remote.Request(addr, batchreq.PBS_BATCH_RegistDep, &batchreq.RegistDep{Owner: m.Owner, ParentID: m.Parent,
		ChildID: m.Child, DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: m.Op, Cost: m.Cost})
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sync.busy, m.Seq)
	if s.shutting {
		return
	}
	name := batchreq.RequestName(batchreq.PBS_BATCH_RegistDep)
	if err != nil {
		n := s.sync.tries[m.Seq]
		s.sync.tries[m.Seq] = n + 1
		s.sync.next[m.Seq] = time.Now().Add(min(time.Duration(1)<<n*time.Second, time.Minute))
		if n == 0 || n%10 == 0 {
			s.log.Logf(logline.EventJob, logline.ClassJob, m.Parent, "sync set: %s (op %d) to %s failed: %v", name, m.Op, addr, err)
		}
		return
	}
	delete(s.sync.tries, m.Seq)
	delete(s.sync.next, m.Seq)
	s.sync.table.Delivered(m.Seq)
	s.saveSyncSets()
	if p.Code != 0 {
		s.log.Logf(logline.EventJob, logline.ClassJob, m.Parent, "sync set: %s (op %d) to %s refused: %d %s", name, m.Op, addr, p.Code, p.Text)
		if m.Op == batchreq.JOB_DEPEND_OP_REGISTER {
			s.syncRefused(m.Child)
		}
	}
}

// syncRefused puts member ref ("id@server", a job here) on user hold:
// its master's server refused its registration.
// Called with s.mu held.
func (s *Server) syncRefused(ref string) {
	j := s.findJob(jobPart(ref))
	if j == nil {
		return
	}
	s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job held for unknown job dep, use 'qrls' to release")
	j.Hold |= state.HoldUser
	s.evaluate(j)
	s.touch(j)
	s.store.Submit(state.SaveJob(j))
}

// keepSyncReleased returns deps without the sync entries that the
// registrations just made removed from the job (now: its depend value
// after them): a job released at once keeps no hold.
func keepSyncReleased(deps, now []depEntry) []depEntry {
	has := map[string]bool{}
	for _, e := range now {
		for _, a := range e.args {
			has[e.typ+"\x00"+a] = true
		}
	}
	out := make([]depEntry, 0, len(deps))
	for _, e := range deps {
		if e.typ == "synccount" || e.typ == "syncwith" {
			var args []string
			for _, a := range e.args {
				if has[e.typ+"\x00"+a] {
					args = append(args, a)
				}
			}
			e.args = args
		}
		out = append(out, e)
	}
	return out
}

// jobPart is the job id of a "id@server" reference.
func jobPart(ref string) string {
	id, _, _ := strings.Cut(ref, "@")
	return id
}
