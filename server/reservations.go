package server

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/resv"
	"gopbs/sched/config"
	"gopbs/sched/reservable"
	"gopbs/server/handler"
	"gopbs/server/jobmail"
	"gopbs/server/pbslog"
	"gopbs/server/reservation"
	"gopbs/server/schedulers"
	"gopbs/server/state"
	"gopbs/server/store"
)

// resvHost is the server as the reservation service (package
// reservation) sees it.
type resvHost struct{ s *Server }

func (h resvHost) Lock()          { h.s.mu.Lock() }
func (h resvHost) Unlock()        { h.s.mu.Unlock() }
func (h resvHost) RLock()         { h.s.mu.RLock() }
func (h resvHost) RUnlock()       { h.s.mu.RUnlock() }
func (h resvHost) Now() time.Time { return h.s.now() }

// Rules reads the reservation rules from sched_priv beside the server's
// own files: reservable.ad, and PluS's NodeSortKey in sched_config (a
// sched_config that does not parse orders nothing: pbs_sched reports it).
func (h resvHost) Rules() (reservation.Rules, error) {
	priv := filepath.Join(h.s.cfg.Home, "sched_priv")
	pol, err := reservable.Load(filepath.Join(priv, "reservable.ad"))
	if err != nil {
		return reservation.Rules{}, err
	}
	rules := reservation.Rules{Policy: pol}
	if f, err := os.Open(filepath.Join(priv, "sched_config")); err == nil {
		cfg, _, err := config.Parse(f, f.Name())
		f.Close()
		if err == nil && cfg.PluS != nil {
			rules.NodeOrder = cfg.PluS.NodeSortKey
		}
	}
	return rules, nil
}

func (h resvHost) UserExists(name string) bool {
	_, err := user.Lookup(name)
	return err == nil
}

// Submit submits the reservation table's own batch through a
// transaction of the state (locked).
func (h resvHost) Submit(ops []store.Op) func() error {
	tx := h.s.db.Begin()
	tx.Put(ops...)
	return tx.Commit()
}

func (h resvHost) Account(typ byte, id, msg string) { h.s.acct.Record(typ, id, msg) }

func (h resvHost) Log(id, msg string) {
	h.s.log.Log(logline.EventAdmin, logline.ClassServer, id, msg)
}

func (h resvHost) Schedule() { h.s.sched.Notify(batchreq.SCH_SCHEDULE_NEW) }

// PartitionScheduler names the scheduler of partition p and whether it
// runs (IDLE or SCHEDULING).
func (h resvHost) PartitionScheduler(p string) (string, bool) {
	name := h.s.scheds.Owner(p)
	if name == "" {
		return "", false
	}
	return name, h.s.scheds.StateOf(name) != schedulers.StateDown
}

// ScheduleFor asks scheduler name for a cycle.
func (h resvHost) ScheduleFor(name string) { h.s.sched.Request(name, batchreq.SCH_SCHEDULE_CMD) }

// Nodes describes the nodes for the reservability policy, from their
// state, properties and the status their MOMs report.
func (h resvHost) Nodes() []*reservable.Node {
	s := h.s
	running := map[string]int{}
	for _, j := range s.jobs.Holding() {
		for _, n := range jobNodes(j) {
			running[n]++
		}
	}
	out := make([]*reservable.Node, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, reservableNode(n, running[n.Name]))
	}
	return out
}

// reservableNode describes node n, running jobs of its own, for the
// reservability policy: its state and properties, and from the status its
// MOM reports its architecture, system, load, memory and idle time.
func reservableNode(n *state.Node, running int) *reservable.Node {
	down := state.NodeStateDown | state.NodeStateOffline | state.NodeStateUnknown | state.NodeStateNotReported
	rn := &reservable.Node{Name: n.Name, IsAlive: n.State&down == 0, NCPU: n.NP, NRunJobs: running,
		Properties: state.ParseArst(n.Attrs.Get(pbsattr.NodeProperties)), Resources: map[string]string{},
		Partition: n.Attrs.Get(pbsattr.NodePartition)}
	for _, item := range strings.Split(n.Attrs.Get(pbsattr.NodeStatus), ",") {
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			continue
		}
		rn.Resources[k] = v
		switch k {
		case "arch":
			rn.Arch = v
		case "opsys":
			rn.OS = v
		case "loadave":
			rn.LoadAvg, _ = strconv.ParseFloat(v, 64)
		case "idletime":
			rn.IdleSeconds, _ = strconv.ParseInt(v, 10, 64)
		case "physmem":
			if b, ok := state.SizeBytes(v); ok {
				rn.PhysMem = b
			}
		}
	}
	return rn
}

// jobNodes returns the nodes a job runs on, each once.
func jobNodes(j *state.Job) []string {
	var out []string
	for _, x := range state.ExecSlots(j.Attrs.Get(pbsattr.JobExecHost)) {
		if !slices.Contains(out, x.Host) {
			out = append(out, x.Host)
		}
	}
	return out
}

func (h resvHost) EnsureQueue(name string, users []string, partition string) []store.Op {
	s := h.s
	q := s.queueByName[name]
	if q == nil {
		q = &state.Queue{Name: name, Order: s.order.Next()}
		q.Attrs.Set(pbsattr.QueueType, "Execution")
		q.Attrs.Set(pbsattr.QueueEnabled, "True")
		q.Attrs.Set(pbsattr.QueueStarted, "True")
		q.Attrs.Set(pbsattr.QueueACLUserEnable, "True")
		s.queues = append(s.queues, q)
		s.queueByName[name] = q
		s.log.Log(logline.EventAdmin, logline.ClassQueue, name, "created for reservation "+name)
	}
	q.Attrs.Set(pbsattr.QueueACLUsers, state.EncodeArst(users))
	q.Attrs.Set(pbsattr.QueuePartition, partition) // its partition's scheduler runs its jobs
	q.Attrs.Set(pbsattr.QueueMtime, strconv.FormatInt(s.now().Unix(), 10))
	tx := s.db.Begin()
	tx.SaveQueue(q)
	return tx.Ops()
}

func (h resvHost) RemoveQueue(name string) ([]store.Op, bool) {
	s := h.s
	q := s.queueByName[name]
	if q == nil {
		return nil, true
	}
	var done []*state.Job
	for j := s.jobs.First(); j != nil; j = j.Next() {
		if j.Queue != q {
			continue
		}
		if j.State != pbsattr.StateComplete {
			return nil, false
		}
		done = append(done, j)
	}
	// completed jobs kept for keep_completed go with their queue
	tx := s.db.Begin()
	for _, j := range done {
		s.life.Purge(tx, j)
	}
	s.queues = slices.DeleteFunc(s.queues, func(x *state.Queue) bool { return x == q })
	delete(s.queueByName, name)
	s.log.Log(logline.EventAdmin, logline.ClassQueue, name, "deleted: its reservation is over")
	tx.DeleteQueue(name)
	return tx.Ops(), true
}

func resvJob(j *state.Job) reservation.Job {
	run := j.State == pbsattr.StateRunning || j.State == pbsattr.StateExiting
	rj := reservation.Job{ID: j.ID, Queue: state.QueueName(j), Running: run, Comment: j.Attrs.Get(pbsattr.JobComment)}
	if run {
		rj.Nodes = jobNodes(j)
	}
	return rj
}

func (h resvHost) QueueJobs(name string) []reservation.Job {
	s := h.s
	q := s.queueByName[name]
	if q == nil || q.Total() == 0 {
		return nil // no walk of the job list for an empty queue
	}
	var out []reservation.Job
	for j := s.jobs.First(); j != nil; j = j.Next() {
		if j.Queue == q && j.State != pbsattr.StateComplete && j.Array == nil {
			out = append(out, resvJob(j))
		}
	}
	return out
}

func (h resvHost) RunningOn(nodes []string) []reservation.Job {
	var out []reservation.Job
	for _, j := range h.s.jobs.Holding() {
		if j.State != pbsattr.StateRunning {
			continue
		}
		if slices.ContainsFunc(jobNodes(j), func(n string) bool { return slices.Contains(nodes, n) }) {
			out = append(out, resvJob(j))
		}
	}
	return out
}

func (h resvHost) SetComment(id, text string) []store.Op {
	j := h.s.jobs.Get(id)
	if j == nil {
		return nil
	}
	j.Attrs.Set(pbsattr.JobComment, text)
	h.s.life.Touch(j)
	tx := h.s.db.Begin()
	tx.SaveJob(j)
	return tx.Ops()
}

// Requeue stops running jobs through their MOMs and requeues them, as
// qrerun: SIGKILL with the "rerun" extension, after which the obit puts
// the job back in its queue; without an answering MOM the job is
// requeued at once, as qrerun -f does.
func (h resvHost) Requeue(ids []string) {
	s := h.s
	for _, id := range ids {
		s.mu.Lock()
		j := s.jobs.Get(id)
		if j == nil || j.State != pbsattr.StateRunning {
			s.mu.Unlock()
			continue
		}
		host := state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
		j.Substate = pbsattr.SubRerun
		s.acct.Record(pbslog.AcctRerun, j.ID, "")
		s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job Rerun: its nodes are reserved")
		s.mu.Unlock()
		p, err := s.run.MomRequest(host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: "SIGKILL"}, "rerun")
		if err == nil && p.Code == 0 {
			continue
		}
		s.mu.Lock()
		var m *jobmail.Mail
		var wait func() error
		if s.jobs.Get(id) == j && j.State == pbsattr.StateRunning {
			m = s.mailer.Compose(s.attrs, j, 'o', true, "its nodes are reserved and its MOM did not answer: requeued, previous output files may be lost")
			tx := s.db.Begin()
			s.run.Requeue(tx, j)
			wait = tx.Commit()
		}
		s.mu.Unlock()
		if wait != nil {
			wait()
			s.mailer.Send(id, m)
		}
	}
}

// discardReply answers nobody: the deletes a reservation's end makes are
// the server's own.
type discardReply struct{}

func (discardReply) Send(*batchreq.Reply) {}
func (discardReply) Reject(int, string)   {}

// Delete deletes jobs as qdel does (accounting D records, SIGTERM then
// SIGKILL through the MOM for running jobs, mail to their owners).
func (h resvHost) Delete(ids []string, why string) {
	s := h.s
	who := handler.Asker{User: "root", Host: s.name, Manager: true, Operator: true}
	s.mu.Lock()
	tx := s.db.Begin()
	var running []*state.Job
	for _, id := range ids {
		j := s.jobs.Get(id)
		if j == nil || j.State == pbsattr.StateComplete {
			continue
		}
		s.log.Logf(logline.EventJob, logline.ClassJob, j.ID, "deleted: %s is over", why)
		if j.State == pbsattr.StateRunning {
			running = append(running, j)
			continue
		}
		s.life.Delete(tx, j, who.Requester())
	}
	if len(running) > 0 {
		s.run.DeleteRunning(discardReply{}, who, running, tx.Ops(), "")
		return
	}
	s.refreshNodeJobs()
	wait := tx.Commit()
	s.mu.Unlock()
	wait()
}

// startReservations makes the reservation service over the server and
// registers its request handlers (types 1000–1007) on mux.
func startReservations(s *Server, mux *batchreq.ServeMux[*handler.Conn]) (*reservation.Service, error) {
	svc, err := reservation.New(resvHost{s}, s.store)
	if err != nil {
		return nil, fmt.Errorf("pbs_server: %w", err)
	}
	serve := func(typ int, f func(c *handler.Conn, req *batchreq.Request)) { mux.HandleFunc(typ, f) }
	serve(batchreq.PBS_BATCH_ResvSubmit, func(c *handler.Conn, req *batchreq.Request) {
		svc.Submit(c.Writer, c.Asker, req.Body.(*batchreq.ResvSubmit))
	})
	serve(batchreq.PBS_BATCH_ResvCommit, func(c *handler.Conn, req *batchreq.Request) {
		svc.Commit(c.Writer, c.Asker, req.Body.(*batchreq.ResvID))
	})
	serve(batchreq.PBS_BATCH_ResvAbort, func(c *handler.Conn, req *batchreq.Request) {
		svc.Abort(c.Writer, c.Asker, req.Body.(*batchreq.ResvID))
	})
	serve(batchreq.PBS_BATCH_ResvModify, func(c *handler.Conn, req *batchreq.Request) {
		svc.Modify(c.Writer, c.Asker, req.Body.(*batchreq.ResvModify))
	})
	serve(batchreq.PBS_BATCH_ResvCancel, func(c *handler.Conn, req *batchreq.Request) {
		svc.Cancel(c.Writer, c.Asker, req.Body.(*batchreq.ResvID))
	})
	serve(batchreq.PBS_BATCH_ResvDestroy, func(c *handler.Conn, req *batchreq.Request) {
		svc.Destroy(c.Writer, c.Asker, req.Body.(*batchreq.ResvID))
	})
	serve(batchreq.PBS_BATCH_ResvStatus, func(c *handler.Conn, req *batchreq.Request) {
		svc.Status(c.Writer, req.Body.(*batchreq.ResvStatus))
	})
	serve(batchreq.PBS_BATCH_ResvAvailNodes, func(c *handler.Conn, req *batchreq.Request) {
		svc.AvailNodes(c.Writer, req.Body.(*batchreq.ResvAvail))
	})
	return svc, nil
}

// advresQueue returns the reservation queue a job names with
// -W x=ADVRES:R123 (the x attribute, as Maui users write it), or "" if
// it names none or one that rs does not have (then x is only kept, for
// a scheduler that reads it). Called with the server's lock held.
func advresQueue(rs *reservation.Service, attrs batchreq.AttrList) string {
	for _, a := range attrs {
		if a.Name != "x" {
			continue
		}
		for _, part := range strings.Split(a.Value, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(part), "ADVRES:"); ok {
				if n, err := resv.ParseID(strings.TrimSpace(v)); err == nil && rs.HasQueue(resv.FormatID(n)) {
					return resv.FormatID(n)
				}
			}
		}
	}
	return ""
}

// jobWalltime returns a job's walltime (0 without one).
func jobWalltime(j *state.Job) time.Duration {
	if v, ok := j.Attrs.LookupRes(pbsattr.JobResourceList, "walltime"); ok {
		if n, ok := state.ParseTime(v); ok {
			return time.Duration(n) * time.Second
		}
	}
	return 0
}

// reservationFilter narrows usable, the nodes a RunJob may allocate, by
// the reservations of rs when the server chooses the nodes (no
// destination): first-fit then passes over reserved nodes. A destination
// naming nodes is checked by reservedRun instead, which says why it is
// refused.
func reservationFilter(rs *reservation.Service, j *state.Job, dest string, usable func(*state.Node) bool) func(*state.Node) bool {
	if dest != "" || rs == nil {
		return usable
	}
	ok := rs.Usable(state.QueueName(j), jobWalltime(j))
	return func(n *state.Node) bool { return (usable == nil || usable(n)) && ok(n.Name) }
}

// reservedRun checks a RunJob against the reservations of rs (with the
// server's lock held): the job of a reservation's queue runs only on its
// nodes during its window; another job never on a node reserved before
// its walltime ends. It returns the refusal, or nil.
func reservedRun(rs *reservation.Service, j *state.Job, slots []state.Slot) *batchreq.Reply {
	if rs == nil {
		return nil
	}
	var nodes []string
	for _, x := range slots {
		if !slices.Contains(nodes, x.Host) {
			nodes = append(nodes, x.Host)
		}
	}
	if msg := rs.CheckRun(state.QueueName(j), nodes, jobWalltime(j)); msg != "" {
		return batchreq.ErrorReply(batchreq.PBSE_RESCUNAV, "", msg)
	}
	return nil
}
