package depend

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/state"
	"gopbs/server/store"
	"gopbs/server/syncset"
)

// Sync sets (seed 001, Synchronize Job Starts) are kept by package
// syncset; Sync ties its table to the jobs, the store and the other
// servers. The master's server keeps the set: members on this server
// register as they enter an execution queue, members on other servers
// through RegisterDependency (Register, with the member's cost). Once
// every member registered, the cheapest is released (its system hold
// removed: locally, or by a RegisterDependency Release to its server);
// when a released job starts, its server reports Ready and the next
// cheapest is released. Costs follow the job's own server's
// resources_cost and system_cost.
//
// Every method but Deliver is called with the server's lock held.
type Sync struct {
	g     *Graph
	lock  sync.Locker
	table syncset.Table
	busy  map[uint64]bool      // messages being sent
	next  map[uint64]time.Time // earliest time of the next attempt
	tries map[uint64]int       // failed attempts
	// The delivery state of the outbox (busy, next, tries) is not
	// stored: a restart retries every message at once.
}

// syncKey is the sync-set table's key in store.Server.
const syncKey = "syncsets"

// Getter reads a record of the store.
type Getter interface {
	Get(bucket, key string) ([]byte, error)
}

// Load reads the sync-set table at start-up.
func (sy *Sync) Load(st Getter) error {
	b, err := st.Get(store.Server, syncKey)
	if err != nil {
		return fmt.Errorf("read sync sets: %w", err)
	}
	if err := sy.table.Decode(b); err != nil {
		return fmt.Errorf("sync sets: %w", err)
	}
	return nil
}

// Table returns the sync-set table (for tests and status).
func (sy *Sync) Table() *syncset.Table { return &sy.table }

// save notes the table's write in tx.
func (sy *Sync) save(tx *state.Txn) {
	tx.Put(store.Put(store.Server, syncKey, sy.table.Encode()))
}

// prices are the server's resources_cost and system_cost.
func (sy *Sync) prices() syncset.Prices {
	attrs := sy.g.db.Attrs
	p := syncset.Prices{PerUnit: map[string]int64{}}
	for _, v := range attrs.Resources(pbsattr.SrvResourcesCost) {
		if n, ok := syncset.ParsePrice(v.Value); ok {
			p.PerUnit[v.Resource] = n
		}
	}
	p.System, _ = syncset.ParsePrice(attrs.Get(pbsattr.SrvSystemCost))
	return p
}

// cost is the resource cost of job j on this server.
func (sy *Sync) cost(j *state.Job) int64 {
	var req []syncset.Resource
	for _, v := range j.Attrs.Resources(pbsattr.JobResourceList) {
		t := pbsattr.TypeString
		if d, ok := state.Resources[v.Resource]; ok {
			t = d.Type
		}
		req = append(req, syncset.Resource{Name: v.Resource, Type: t, Value: v.Value})
	}
	return sy.prices().Cost(req)
}

// count returns the synccount of j, if it is a sync master.
func (sy *Sync) count(j *state.Job) (int, bool) {
	for _, e := range sy.g.Of(j) {
		if e.Type == "synccount" && len(e.Args) == 1 {
			n, err := strconv.Atoi(e.Args[0])
			return n, err == nil
		}
	}
	return 0, false
}

// open records the set of master j entering an execution queue and
// releases what that allows, in tx.
func (sy *Sync) open(tx *state.Txn, j *state.Job) {
	n, ok := sy.count(j)
	if !ok {
		return
	}
	rel := sy.table.Open(j.ID, j.ID+"@"+sy.g.name, n, sy.cost(j))
	sy.save(tx)
	sy.release(tx, j.ID, rel)
}

// registerLocal registers member j with master m, both on this server,
// in tx; it returns a PBSE code (0: registered).
func (sy *Sync) registerLocal(tx *state.Txn, m, j *state.Job) int {
	if _, ok := sy.count(m); !ok {
		return batchreq.PBSE_NOSYNCMSTR
	}
	if _, ok := sy.table.Set(m.ID); !ok {
		// a master queued before this server kept sets, or outside
		// an execution queue: open its set now
		sy.open(tx, m)
	}
	ref := j.ID + "@" + sy.g.name
	add(m, sy.g.name, "syncwith", ref)
	sy.g.touch(m)
	rel, err := sy.table.Register(m.ID, ref, sy.cost(j))
	if err != nil {
		return batchreq.PBSE_NOSYNCMSTR
	}
	sy.save(tx)
	tx.SaveJob(m)
	sy.release(tx, m.ID, rel)
	return 0
}

// release releases the members rel of master's set, in tx: a local job
// loses the system hold of its sync dependency and awaits its start; a
// job on another server is released by a RegisterDependency Release.
func (sy *Sync) release(tx *state.Txn, master string, rel []string) {
	masterRef := master + "@" + sy.g.host.SyncSelf()
	for _, ref := range rel {
		id, local := sy.g.localJobID(ref)
		if !local {
			id = jobPart(ref)
			sy.g.log.Logf(logline.EventJob, logline.ClassJob, master, "sync set: releasing %s", ref)
			sy.send(tx, ref, &batchreq.RegistDep{ParentID: id, ChildID: masterRef,
				DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_RELEASE})
			continue
		}
		j := sy.g.Find(id)
		if j == nil {
			continue
		}
		sy.g.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "sync set of %s: released", master)
		if j.ID == master {
			sy.dropDeps(j, "")
		} else {
			sy.dropDeps(j, master)
		}
		sy.table.Await(j.ID, master+"@"+sy.g.name)
		sy.g.ReleaseHold(tx, j)
		tx.SaveJob(j)
	}
	if len(rel) > 0 {
		sy.save(tx)
	}
}

// dropDeps removes j's syncwith entries naming master (a job id, any
// server part), or, for master "", j's own synccount and syncwith
// entries (j is the master).
func (sy *Sync) dropDeps(j *state.Job, master string) {
	deps := sy.g.Of(j)
	kept := deps[:0]
	for _, e := range deps {
		switch {
		case master == "" && (e.Type == "synccount" || e.Type == "syncwith"):
			continue
		case master != "" && e.Type == "syncwith":
			var args []string
			for _, a := range e.Args {
				if id, _, _ := strings.Cut(a, "@"); id != master {
					args = append(args, a)
				}
			}
			e.Args = args
		}
		kept = append(kept, e)
	}
	Set(j, kept)
	sy.g.touch(j)
}

// registerRemote asks the server of master ("id@server") to register
// member j, with its cost.
func (sy *Sync) registerRemote(tx *state.Txn, j *state.Job, master string) {
	sy.send(tx, master, &batchreq.RegistDep{Owner: j.OwnerUser(), ParentID: jobPart(master), ChildID: j.ID + "@" + sy.g.host.SyncSelf(),
		DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_REGISTER, Cost: sy.cost(j)})
}

// started reports the start of job j to its sync master, if it was
// released from a set (the next release when the master is here), in
// tx.
func (sy *Sync) started(tx *state.Txn, j *state.Job) {
	master, ok := sy.table.Started(j.ID)
	if !ok {
		return
	}
	sy.save(tx)
	id, local := sy.g.localJobID(master)
	ref := j.ID + "@" + sy.g.name
	if !local {
		id = jobPart(master)
		sy.send(tx, master, &batchreq.RegistDep{Owner: j.OwnerUser(), ParentID: id, ChildID: j.ID + "@" + sy.g.host.SyncSelf(),
			DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_READY})
		return
	}
	sy.g.log.Logf(logline.EventJob, logline.ClassJob, id, "sync set: %s is ready", ref)
	sy.release(tx, id, sy.table.Ready(id, ref))
}

// gone handles the end of job j (deleted, aborted or finished) for the
// sync sets, in tx: a master's members that have not started are
// aborted (seed 001: local ones are returned as doomed, others get a
// RegisterDependency Delete); a member leaves its master's set. The
// local jobs released are returned as changed.
func (sy *Sync) gone(tx *state.Txn, j *state.Job) (changed, doomed []*state.Job) {
	if waited, ok := sy.table.Started(j.ID); ok {
		sy.leave(tx, j, waited)
	}
	if _, master := sy.count(j); !master {
		// a member not released yet: its syncwith entry names the master
		// (a master's own syncwith entries are its members)
		for _, e := range sy.g.Of(j) {
			if e.Type == "syncwith" {
				for _, m := range e.Args {
					changed = append(changed, sy.leave(tx, j, m)...)
				}
			}
		}
	}
	if _, ok := sy.table.Set(j.ID); !ok {
		return changed, doomed
	}
	masterRef := j.ID + "@" + sy.g.host.SyncSelf()
	for _, ref := range sy.table.Abort(j.ID) {
		id, local := sy.g.localJobID(ref)
		if !local {
			id = jobPart(ref)
			sy.send(tx, ref, &batchreq.RegistDep{Owner: j.OwnerUser(), ParentID: id, ChildID: masterRef,
				DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_DELETE})
			continue
		}
		if c := sy.g.Find(id); c != nil && c != j && c.State != pbsattr.StateComplete && c.State != pbsattr.StateRunning {
			doomed = append(doomed, c)
		}
	}
	sy.save(tx)
	return changed, doomed
}

// leave takes job j out of the set of master ("id@server"), in tx, and
// returns the local jobs that released.
func (sy *Sync) leave(tx *state.Txn, j *state.Job, master string) []*state.Job {
	id, local := sy.g.localJobID(master)
	if !local {
		id = jobPart(master)
		sy.send(tx, master, &batchreq.RegistDep{Owner: j.OwnerUser(), ParentID: id, ChildID: j.ID + "@" + sy.g.host.SyncSelf(),
			DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: batchreq.JOB_DEPEND_OP_UNREG})
		return nil
	}
	rel := sy.table.Leave(id, j.ID+"@"+sy.g.name)
	sy.save(tx)
	return sy.releasedJobs(tx, id, rel)
}

// releasedJobs is release, returning the local jobs it released.
func (sy *Sync) releasedJobs(tx *state.Txn, master string, rel []string) []*state.Job {
	var out []*state.Job
	for _, ref := range rel {
		if id, local := sy.g.localJobID(ref); local {
			if j := sy.g.Find(id); j != nil {
				out = append(out, j)
			}
		}
	}
	sy.release(tx, master, rel)
	return out
}

// Serve serves a RegisterDependency of type syncwith from another server,
// in tx: Register and Ready (and Unregister) for a master here, Release
// and Delete for a member here. It returns a PBSE code (0: done) and,
// for a Delete of a member that has not started, the job to delete.
// A refusal may leave changes in tx (a set opened on the way), which the
// caller makes durable too.
func (sy *Sync) Serve(tx *state.Txn, body *batchreq.RegistDep) (doomed *state.Job, code int) {
	j := sy.g.Find(body.ParentID)
	if j == nil {
		return nil, batchreq.PBSE_UNKJOBID
	}
	switch body.Op {
	case batchreq.JOB_DEPEND_OP_REGISTER:
		if _, ok := sy.count(j); !ok {
			return nil, batchreq.PBSE_NOSYNCMSTR
		}
		if _, ok := sy.table.Set(j.ID); !ok {
			sy.open(tx, j)
		}
		rel, err := sy.table.Register(j.ID, body.ChildID, body.Cost)
		if err != nil {
			return nil, batchreq.PBSE_IVALREQ
		}
		add(j, sy.g.name, "syncwith", body.ChildID)
		sy.g.touch(j)
		sy.save(tx)
		tx.SaveJob(j)
		sy.release(tx, j.ID, rel)
	case batchreq.JOB_DEPEND_OP_READY:
		sy.release(tx, j.ID, sy.table.Ready(j.ID, body.ChildID))
	case batchreq.JOB_DEPEND_OP_UNREG:
		rel := sy.table.Leave(j.ID, body.ChildID)
		sy.save(tx)
		sy.release(tx, j.ID, rel)
	case batchreq.JOB_DEPEND_OP_RELEASE:
		// Ready goes to the master's server as this job's syncwith
		// names it (which reached it at registration)
		master, _, _ := strings.Cut(body.ChildID, "@")
		ref := body.ChildID
		for _, e := range sy.g.Of(j) {
			for _, a := range e.Args {
				if id, _, _ := strings.Cut(a, "@"); e.Type == "syncwith" && id == master {
					ref = a
				}
			}
		}
		sy.dropDeps(j, master)
		sy.table.Await(j.ID, ref)
		sy.save(tx)
		sy.g.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "sync set of %s: released", body.ChildID)
		sy.g.ReleaseHold(tx, j)
		tx.SaveJob(j)
	case batchreq.JOB_DEPEND_OP_DELETE:
		if j.State == pbsattr.StateRunning || j.State == pbsattr.StateComplete {
			break
		}
		sy.g.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "Job deleted as result of dependency on job %s", body.ChildID)
		return j, 0
	default:
		return nil, batchreq.PBSE_IVALREQ
	}
	return nil, 0
}

// keepSyncReleased returns deps without the sync entries that the
// registrations just made removed from the job (now: its depend value
// after them): a job released at once keeps no hold.
func keepSyncReleased(deps, now []Entry) []Entry {
	has := map[string]bool{}
	for _, e := range now {
		for _, a := range e.Args {
			has[e.Type+"\x00"+a] = true
		}
	}
	out := make([]Entry, 0, len(deps))
	for _, e := range deps {
		if e.Type == "synccount" || e.Type == "syncwith" {
			var args []string
			for _, a := range e.Args {
				if has[e.Type+"\x00"+a] {
					args = append(args, a)
				}
			}
			e.Args = args
		}
		out = append(out, e)
	}
	return out
}
