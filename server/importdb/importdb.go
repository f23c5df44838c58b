// Package importdb builds the contents of a new server database from
// objects described by attribute names and text values, the way
// pbs_import (package migrate) fills one from a TORQUE server_priv.
//
// A Database keeps the objects in the state package's tables (the job
// table state.Jobs, queues, nodes, the server's attributes) and writes
// them in one state.Txn, with the server's own record encoding, so that
// a server started on the result recovers them as if it had written
// them. What a new server and an import share comes from the packages
// that own it: the attributes of a new database and the creation order
// of queues and nodes (server/state), the resource defaults
// (server/admit), a requeued running job and keep_completed
// (server/lifecycle), the lines of server_priv/nodes
// (server/nodesfile). It needs no server.
package importdb

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/server/admit"
	"gopbs/server/depend"
	"gopbs/server/lifecycle"
	"gopbs/server/nodesfile"
	"gopbs/server/state"
	"gopbs/server/store"
)

// Database is a new server database being built.
//
// Values may be in any form the server accepts from a client or reads
// from a TORQUE file (string arrays comma-separated or one element a
// line); they are checked and stored in their canonical form. Attributes
// the server computes (server_state, total_jobs, state_count,
// pbs_version, next_job_number, net_counter, resources_assigned; a job's
// job_state, substate, queue, server, queue_rank, queue_type and
// Hold_Types, which the record's fixed fields hold) are not stored.
type Database struct {
	attrs       state.Attrs
	nextJob     int64
	jobs        state.Jobs
	queues      []*state.Queue
	queueByName map[string]*state.Queue
	nodes       []*state.Node
	nodeByName  map[string]*state.Node
	order       state.Order // creation order of queues and nodes
	db          state.DB    // transactions over the tables above; no store (Ops only)
	admission   *admit.Checker
	life        *lifecycle.Life
	now         func() time.Time
	scripts     []store.Op
	// Dropped lists "object: name" of the attributes the server does not
	// know, which AddQueue, AddNodes and SetServer leave out.
	Dropped []string
}

// New returns a database holding the server attributes of a new server
// (the defaults pbs_server -t create sets) and nothing else.
func New() *Database {
	d := &Database{
		attrs:       state.DefaultServerAttrs(),
		queueByName: map[string]*state.Queue{},
		nodeByName:  map[string]*state.Node{},
		now:         time.Now,
	}
	d.db = state.DB{Jobs: &d.jobs, Attrs: &d.attrs, NextJob: &d.nextJob}
	d.admission = admit.New(admitState{d})
	// The life cycle is used for what a job's import needs of it
	// (Requeue, KeepCompleted): no job is routed, no dependency
	// registered and no mail sent, so neither it nor its dependency
	// rules have a host.
	deps := depend.New(depend.Config{DB: &d.db, Now: d.now})
	d.life = lifecycle.New(lifecycle.Config{DB: &d.db, Deps: deps, Now: d.now})
	return d
}

// admitState is the database as admission (package admit) reads it for
// the resource defaults.
type admitState struct{ d *Database }

func (v admitState) Attrs() state.Attrs           { return v.d.attrs }
func (v admitState) Nodes() []*state.Node         { return v.d.nodes }
func (v admitState) Node(name string) *state.Node { return v.d.nodeByName[name] }

var _ admit.State = admitState{}

// computedServer and computedQueue are the attributes the server computes
// for its status replies rather than keeping.
var (
	computedServer = map[int]bool{pbsattr.SrvState: true, pbsattr.SrvTotalJobs: true, pbsattr.SrvStateCount: true, pbsattr.SrvPBSVersion: true,
		pbsattr.SrvNextJobNumber: true, pbsattr.SrvNetCounter: true, pbsattr.SrvResourcesAssigned: true}
	computedQueue = map[int]bool{pbsattr.QueueTotalJobs: true, pbsattr.QueueStateCount: true, pbsattr.QueueResourcesAssigned: true}
	// recordJob are the job attributes the record's fixed fields hold.
	recordJob = map[int]bool{pbsattr.JobState: true, pbsattr.JobSubstate: true, pbsattr.JobQueue: true, pbsattr.JobServer: true,
		pbsattr.JobQueueRank: true, pbsattr.JobQueueType: true, pbsattr.JobHoldTypes: true}
)

// importValue returns the canonical value of one attribute of defs (its
// definition index and resource name), or idx -1 for a name defs does not
// know.
func importValue(defs *state.DefTable, a state.RecordAttr) (idx int, res, val string, err error) {
	idx = defs.Find(a.Name)
	if idx < 0 || defs == state.JobDefs && idx == state.UnknownJobAttr {
		return -1, "", "", nil
	}
	d := defs.Defs[idx]
	typ := d.Type
	if typ == pbsattr.TypeResourceList {
		res = strings.ToLower(a.Resource)
		rd, ok := state.Resources[res]
		if !ok {
			rd = state.ResourceDef{Type: pbsattr.TypeString} // a site resource, kept as text
		}
		typ = rd.Type
	}
	v, ok := state.DecodeValue(typ, a.Value)
	if !ok {
		name := a.Name
		if a.Resource != "" {
			name += "." + a.Resource
		}
		return idx, res, "", fmt.Errorf("attribute %s: bad value %q", name, a.Value)
	}
	return idx, res, v, nil
}

// importAttrs sets the attributes of list in l, except the computed ones;
// names defs does not know are appended to d.Dropped.
func (d *Database) importAttrs(object string, defs *state.DefTable, l *state.Attrs, list []state.RecordAttr, computed map[int]bool) error {
	for _, a := range list {
		idx, res, v, err := importValue(defs, a)
		if err != nil {
			return fmt.Errorf("%s: %w", object, err)
		}
		if idx < 0 {
			d.Dropped = append(d.Dropped, object+": "+a.Name)
			continue
		}
		if !computed[idx] {
			l.SetRes(idx, res, v)
		}
	}
	return nil
}

// SetServer sets the next job number and the server attributes (over the
// defaults).
func (d *Database) SetServer(next int64, attrs []state.RecordAttr) error {
	if next < 0 {
		return fmt.Errorf("server: negative next job number %d", next)
	}
	d.nextJob = next
	return d.importAttrs("server", state.ServerDefs, &d.attrs, attrs, computedServer)
}

// AddQueue adds a queue; queues are listed in the order they are added.
func (d *Database) AddQueue(name string, attrs []state.RecordAttr) error {
	if name == "" || len(name) > 15 || !state.NameChar(name[0]) {
		return fmt.Errorf("queue %q: bad name", name)
	}
	if d.queueByName[name] != nil {
		return fmt.Errorf("queue %s: added twice", name)
	}
	q := &state.Queue{Name: name}
	if err := d.importAttrs("queue "+name, state.QueueDefs, &q.Attrs, attrs, computedQueue); err != nil {
		return err
	}
	if !q.IsExec() && !q.IsRoute() {
		return fmt.Errorf("queue %s: queue_type %q is neither Execution nor Route", name, q.Attrs.Get(pbsattr.QueueType))
	}
	q.Order = d.order.Next()
	d.queues = append(d.queues, q)
	d.queueByName[name] = q
	return nil
}

// AddNodes adds the nodes of one line of a nodes file (spec 12 §9.1: a
// name, possibly a range, with np=, gpus= and properties), with the
// OFFLINE and RESERVE state bits set as given and the further attributes
// attrs (such as note).
func (d *Database) AddNodes(line string, offline, reserve bool, attrs []state.RecordAttr) error {
	nodes := nodesfile.Fresh(nodesfile.ParseLine(line), d.nodeByName, &d.order)
	if len(nodes) == 0 {
		return fmt.Errorf("nodes: no node in line %q", line)
	}
	for _, n := range nodes {
		if err := d.importAttrs("node "+n.Name, state.NodeDefs, &n.Attrs, attrs, nil); err != nil {
			return err
		}
		if offline {
			n.State |= state.NodeStateOffline
		}
		if reserve {
			n.State |= state.NodeStateReserve
		}
		d.nodes = append(d.nodes, n)
		d.nodeByName[n.Name] = n
	}
	return nil
}

// AddJob adds a job. Its queue must have been added, and for an array
// sub-job (Parent set) its template. The fixed fields of r give the
// state, substate, hold bits, queue rank and array bookkeeping; Seq orders
// the jobs when the server lists them. A completed job without PurgeAt is
// kept for keep_completed from its comp_time. As TORQUE does when it recovers a
// job, the resources its queue's and the server's resources_default give
// are filled in where the job has none. script, if not nil, is the job
// script (one per array, stored with the template).
func (d *Database) AddJob(r *state.JobRecord, script []byte) error {
	if r.ID == "" {
		return fmt.Errorf("job without an id")
	}
	if d.jobs.Get(r.ID) != nil {
		return fmt.Errorf("job %s: added twice", r.ID)
	}
	q := d.queueByName[r.Queue]
	if q == nil {
		return fmt.Errorf("job %s: unknown queue %q", r.ID, r.Queue)
	}
	if r.State <= int64(pbsattr.StateTransit) || r.State > int64(pbsattr.StateComplete) {
		return fmt.Errorf("job %s: state %d cannot be imported", r.ID, r.State)
	}
	j := &state.Job{ID: r.ID, Seq: r.Seq, State: pbsattr.JobStateNum(r.State), Substate: pbsattr.Substate(r.Substate), Hold: int(r.Hold),
		Rank: r.Rank, ArrayIndex: int(r.ArrayIndex), PurgeAt: r.PurgeAt}
	if r.Parent != "" {
		p := d.jobs.Get(r.Parent)
		if p == nil || p.Array == nil {
			return fmt.Errorf("job %s: array template %s not added before it", r.ID, r.Parent)
		}
		j.Parent = p
		p.Array.Subjobs = append(p.Array.Subjobs, j)
	}
	if r.ArrayRequest != "" {
		if _, _, ok := state.ParseArrayRequest(r.ArrayRequest); !ok {
			return fmt.Errorf("job %s: bad array request %q", r.ID, r.ArrayRequest)
		}
		j.Array = &state.ArrayInfo{Request: r.ArrayRequest}
		for i, p := range []*int{&j.Array.Size, &j.Array.OK, &j.Array.NotOK, &j.Array.Started} {
			if i < len(r.ArrayCounts) {
				*p = int(r.ArrayCounts[i])
			}
		}
	}
	for _, a := range r.Attrs {
		idx, res, v, err := importValue(state.JobDefs, a)
		if err != nil {
			return fmt.Errorf("job %s: %w", r.ID, err)
		}
		switch {
		case idx < 0:
			key := a.Name
			if a.Resource != "" {
				key += "\x1f" + a.Resource
			}
			j.Attrs.SetRes(state.UnknownJobAttr, key, a.Value)
		case idx == pbsattr.JobDepend:
			if _, ok := depend.Parse(v, ""); !ok {
				return fmt.Errorf("job %s: bad depend %q", r.ID, a.Value)
			}
			j.Attrs.Set(idx, v)
		case !recordJob[idx]:
			j.Attrs.SetRes(idx, res, v)
		}
	}
	if j.State == pbsattr.StateComplete && j.PurgeAt == 0 {
		// kept from its completion (comp_time) for keep_completed
		done, err := strconv.ParseInt(j.Attrs.Get(pbsattr.JobCompTime), 10, 64)
		if err != nil || done <= 0 {
			done = d.now().Unix()
		}
		j.PurgeAt = done + max(d.life.KeepCompleted(q), 0)
	}
	d.admission.ApplyDefaults(j, q)
	d.jobs.Link(j)
	d.jobs.Enqueue(j, q)
	if script != nil {
		d.scripts = append(d.scripts, store.Put(store.Script, j.ID, script))
	}
	return nil
}

// Requeue puts a running job of the database back in its queue, as the
// server does with a job whose launch failed: its execution host and
// session are forgotten and its state follows from its holds, execution
// time and dependencies.
func (d *Database) Requeue(id string) error {
	j := d.jobs.Get(id)
	if j == nil {
		return fmt.Errorf("job %s: not in the database", id)
	}
	if j.State != pbsattr.StateRunning {
		return fmt.Errorf("job %s: not running", id)
	}
	// The transaction's batch is not kept: Ops saves every job as it is
	// then.
	d.life.Requeue(d.db.Begin(), j)
	return nil
}

// Ops returns the store operations that write the database, made in one
// transaction of the state: the server record, then every queue, node,
// job and script.
func (d *Database) Ops() []store.Op {
	tx := d.db.Begin()
	tx.SaveServer()
	for _, q := range d.queues {
		tx.SaveQueue(q)
	}
	for _, n := range d.nodes {
		tx.SaveNode(n)
	}
	for j := d.jobs.First(); j != nil; j = j.Next() {
		tx.SaveJob(j)
	}
	tx.Put(d.scripts...)
	return tx.Ops()
}

// NodeLines returns the lines of server_priv/nodes for the nodes added.
func (d *Database) NodeLines() []string { return nodesfile.Lines(d.nodes) }

// JobCount returns the number of jobs added.
func (d *Database) JobCount() int { return d.jobs.Len() }
