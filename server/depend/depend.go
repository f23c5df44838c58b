// Package depend keeps the dependencies among jobs (spec 12 §6): the
// depend attribute's value (Entry, Parse, Format), the registrations a
// job makes as it enters an execution queue, the holds its dependencies
// keep, and what a parent's start, end or deletion does to its children,
// including the counts of job arrays. Sync sets (seed 001) are its Sync.
//
// A Graph works over the state package's job table and makes every change
// in the caller's state.Txn; it knows no connection, request handler or
// link. The server holds its lock over every call.
package depend

import (
	"strconv"
	"strings"
	"sync"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// Host is what the dependency rules ask of the server beyond the state.
type Host interface {
	// MailAbort sends the owner of j the abort mail with text, if the
	// server sends mail. It must not block: it is called with the
	// server's lock held.
	MailAbort(j *state.Job, text string)
	// SyncSelf is how other servers reach this one: its name, with the
	// port when it is not the standard one.
	SyncSelf() string
	// Destination returns the address of the server named server, ok
	// false when it cannot be reached.
	Destination(server string) (addr string, ok bool)
	// SendRegistDep sends a RegisterDependency to the server at addr
	// and returns its reply. Called without the lock.
	SendRegistDep(addr string, body *batchreq.RegistDep) (*batchreq.Reply, error)
	// Shutting reports whether the server is shutting down.
	Shutting() bool
}

// Config is what a Graph works over.
type Config struct {
	Name string    // the server's name, the host part of job ids
	DB   *state.DB // the job table, the server's attributes, the store
	Log  *pbslog.Logger
	Now  func() time.Time
	Host Host
	Lock sync.Locker // the server's lock, taken by the sync-set outbox's deliveries
}

// Graph is the dependency rules over the job table.
type Graph struct {
	name string
	db   *state.DB
	log  *pbslog.Logger
	now  func() time.Time
	host Host
	sync *Sync
}

// New returns the dependency rules over cfg's state.
func New(cfg Config) *Graph {
	g := &Graph{name: cfg.Name, db: cfg.DB, log: cfg.Log, now: cfg.Now, host: cfg.Host}
	g.sync = &Sync{g: g, lock: cfg.Lock}
	return g
}

// Sync returns the sync sets.
func (g *Graph) Sync() *Sync { return g.sync }

// Find looks a job up by id as clients give it: the full id, an id with
// "@server" appended, or the bare sequence number.
func (g *Graph) Find(id string) *state.Job {
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id = id[:i]
	}
	if j := g.db.Jobs.Get(id); j != nil {
		return j
	}
	seq := id
	if i := strings.IndexByte(id, '.'); i >= 0 {
		seq = id[:i]
	}
	return g.db.Jobs.Get(seq + "." + g.name)
}

// Evaluate recomputes a non-running job's state from its holds,
// execution time and dependencies, in tx (state.Txn.Evaluate).
func (g *Graph) Evaluate(tx *state.Txn, j *state.Job) {
	tx.Evaluate(j, g.now().Unix(), Holds)
}

// touch sets j's modification time.
func (g *Graph) touch(j *state.Job) { state.Touch(j, g.now().Unix()) }

// Of returns the dependencies of j.
func (g *Graph) Of(j *state.Job) []Entry { return Of(j, g.name) }

// Parse is Parse for this server.
func (g *Graph) Parse(v string) ([]Entry, bool) { return Parse(v, g.name) }

// localJobID strips "@<this server>" from a dependency argument; ok is
// false for a job on another server.
func (g *Graph) localJobID(arg string) (string, bool) {
	id, srv, found := strings.Cut(arg, "@")
	if found && !strings.EqualFold(srv, g.name) {
		return "", false
	}
	return id, true
}

// Register performs the registrations of a job entering an execution
// queue, in tx: the parents it names record it, and the sync set it
// belongs to counts it. Rejected registrations drop the dependency, as
// TORQUE does. The parents changed are noted in tx.
func (g *Graph) Register(tx *state.Txn, j *state.Job) {
	deps := g.Of(j)
	if len(deps) == 0 {
		return
	}
	self := j.ID + "@" + g.name
	userHold := false
	g.sync.open(tx, j)
	for i := range deps {
		e := &deps[i]
		if isCount(e.Type) {
			continue
		}
		var keep []string
		for _, arg := range e.Args {
			pid, local := g.localJobID(arg)
			if e.Type == "syncwith" {
				// sync sets: sync.go
				if !local {
					keep = append(keep, arg)
					g.sync.registerRemote(tx, j, arg)
					continue
				}
				if p := g.Find(pid); p != nil && p != j {
					if g.sync.registerLocal(tx, p, j) == 0 {
						keep = append(keep, arg)
						continue
					}
				}
			}
			var p *state.Job
			if local {
				p = g.Find(stripArrayCount(pid))
			}
			code := g.registerOne(j, p, e.Type, self)
			switch code {
			case 0:
				keep = append(keep, arg)
				tx.SaveJob(p)
			case batchreq.PBSE_BADDEPEND:
				g.registrationRefused(j, pid, code)
			default:
				// Spec 12 §6.2: a user hold for every refusal but
				// BADSTATE.
				g.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job held for unknown job dep, use 'qrls' to release")
				if code != batchreq.PBSE_BADSTATE {
					userHold = true
				}
			}
		}
		e.Args = keep
	}
	Set(j, keepSyncReleased(deps, g.Of(j)))
	if userHold {
		j.Hold |= state.HoldUser
	}
}

// registrationRefused handles the refusal of child j's registration by
// its parent job parent (code PBSE_BADDEPEND: a before* registration
// against a job without on:N). Capture 82 shows what TORQUE does, and the
// captures beat spec 12 §6.2's prose: the refusal is logged as a rejected
// RegisterDependency request, the child logs "Dependency request for job
// rejected by <parent>", gets a user hold (Hold_Types u) and an abort mail
// to its owner, and keeps its state: the hold comes after the state was
// computed, so a queued job stays queued and is run by the scheduler. The
// hold is real for everything that re-evaluates the state later (qhold,
// qrls of another hold, qalter, a requeue), and qrls -h u releases it.
func (g *Graph) registrationRefused(j *state.Job, parent string, code int) {
	g.log.Logf(logline.EventDebug, logline.ClassRequest, "req_reject", "Reject reply code=%d(%s), aux=0, type=%s, from %s@%s",
		code, batchreq.ErrorText(code), batchreq.RequestName(batchreq.PBS_BATCH_RegistDep), j.OwnerUser(), g.name)
	msg := "Dependency request for job rejected by " + parent
	g.log.Log(logline.EventJob, logline.ClassJob, j.ID, msg)
	j.Hold |= state.HoldUser
	if j.State != pbsattr.StateRunning {
		j.LateHold |= state.HoldUser
	}
	g.host.MailAbort(j, msg)
}

// registerOne registers child j's dependency of type t on parent p.
func (g *Graph) registerOne(j, p *state.Job, t, self string) int {
	if p == nil {
		return batchreq.PBSE_UNKJOBID
	}
	if p == j {
		return batchreq.PBSE_IVALREQ
	}
	switch {
	case strings.HasPrefix(t, "after"):
		if p.State == pbsattr.StateComplete {
			return batchreq.PBSE_BADSTATE
		}
		add(p, g.name, Mirror(t), self)
		g.touch(p)
	case strings.HasPrefix(t, "before"):
		if p.OwnerUser() != j.OwnerUser() {
			return batchreq.PBSE_PERM
		}
		deps := g.Of(p)
		for i := range deps {
			if deps[i].Type == "on" {
				n, _ := strconv.Atoi(deps[i].Args[0])
				if n <= 0 {
					break
				}
				n--
				if n == 0 {
					deps[i].Args = nil
				} else {
					deps[i].Args[0] = strconv.Itoa(n)
				}
				Set(p, deps)
				add(p, g.name, Mirror(t), self)
				g.touch(p)
				return 0
			}
		}
		return batchreq.PBSE_BADDEPEND
	case t == "syncwith":
		for _, e := range g.Of(p) {
			if e.Type == "synccount" {
				add(p, g.name, "syncwith", self)
				g.touch(p)
				return 0
			}
		}
		return batchreq.PBSE_NOSYNCMSTR
	}
	return 0
}

// ReleaseHold clears the system hold of a job whose dependencies no
// longer hold it, in tx.
func (g *Graph) ReleaseHold(tx *state.Txn, j *state.Job) {
	if j.Hold&state.HoldSystem != 0 && !Holds(j) {
		j.Hold &^= state.HoldSystem
		if j.Substate == pbsattr.SubDepnHold || j.Substate == pbsattr.SubSyncHold {
			j.Substate = pbsattr.SubHeld
		}
		g.Evaluate(tx, j)
		g.touch(j)
	}
}

// Registered serves a RegisterDependency of another server's job (the
// child) on job parent here, for an operation other than the sync sets'
// and other than Delete: Register records the mirror type on the parent
// (a before* registration only from the parent's owner), Unregister
// removes it, Release drops the dependency and releases the parent's
// hold. It returns a PBSE code, 0 when done; the parent is noted in tx.
func (g *Graph) Registered(tx *state.Txn, parent *state.Job, body *batchreq.RegistDep) int {
	t := batchreq.DependName(body.DepType)
	child := body.ChildID
	if !strings.Contains(child, "@") {
		child += "@" + g.name
	}
	switch body.Op {
	case batchreq.JOB_DEPEND_OP_REGISTER:
		if strings.HasPrefix(t, "before") && parent.OwnerUser() != body.Owner {
			return batchreq.PBSE_PERM
		}
		add(parent, g.name, Mirror(t), child)
		g.touch(parent)
	case batchreq.JOB_DEPEND_OP_UNREG:
		remove(parent, g.name, Mirror(t), child)
	case batchreq.JOB_DEPEND_OP_RELEASE:
		remove(parent, g.name, t, child)
		g.ReleaseHold(tx, parent)
	default:
		return batchreq.PBSE_IVALREQ
	}
	tx.SaveJob(parent)
	return 0
}
