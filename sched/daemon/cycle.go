// This file runs a scheduling cycle: it reads the world from the server
// (ReadWorld), hands it to the running policy (Cycle) and carries out the
// policy's actions over the server connection (serverActions).

package daemon

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"gopbs/internal/logline"
	"gopbs/sched/placement"
	"gopbs/sched/policy"
	"gopbs/sched/svrconn"
	"gopbs/sched/world"
)

// serverActions carries out policy actions over the server connection.
type serverActions struct{ c *svrconn.Conn }

func (a serverActions) QueryNodes(j *world.Job, spec string) (placement.Availability, error) {
	n, err := a.c.ResourceQuery(spec)
	if err != nil {
		// Only an explicit negative answer means "never": an error
		// reply must not get jobs deleted.
		return placement.Later, err
	}
	switch {
	case n > 0:
		return placement.Now, nil
	case n < 0:
		return placement.Never, nil
	}
	return placement.Later, nil
}

func (a serverActions) SetComment(j *world.Job, comment string) error {
	return a.c.SetComment(j.ID, comment)
}

func (a serverActions) RunJob(j *world.Job, dest string) error { return a.c.RunJob(j.ID, dest) }

func (a serverActions) DeleteJob(j *world.Job, msg string) error { return a.c.DeleteJob(j.ID, msg) }

// SetPlan implements policy.PlanActions.
func (a serverActions) SetPlan(j *world.Job, start time.Time, hosts string) error {
	if start.IsZero() {
		return a.c.SetPlan(j.ID, "", "")
	}
	return a.c.SetPlan(j.ID, strconv.FormatInt(start.Unix(), 10), hosts)
}

func (a serverActions) MoveJob(j *world.Job, queue string) error { return a.c.MoveJob(j.ID, queue) }

// ReadWorld asks the server (and the MOMs) for the world, in the FIFO
// scheduler's request order: StatusServer, StatusNode, the MOM queries,
// StatusQue, then one SelStat per queue in the server's queue order.
// On a cluster of more than momQueries nodes the MOM queries go on while
// the queues and jobs are read from the server: the server and each MOM
// see the same requests in the same order as one after the other, but the
// cycle does not wait for the last of 1,000 MOMs before asking for
// 18,000 jobs. A smaller cluster's MOMs are all asked in one concurrent
// round, which overlapping would hardly shorten, so there the FIFO
// scheduler's order is kept exactly: the MOM queries between StatusNode
// and StatusQue, as in the captures.
func (d *Daemon) ReadWorld(ctx context.Context, conn *svrconn.Conn) (*world.World, error) {
	w := &world.World{Now: d.Now()}
	srv, err := conn.StatusServer()
	if err != nil {
		return nil, fmt.Errorf("status server: %w", err)
	}
	if len(srv) > 0 {
		w.Server = world.FromServer(srv[0].Name, srv[0].Attrs)
	} else {
		w.Server = world.FromServer("", nil)
	}
	nodes, err := conn.StatusNode()
	if err != nil {
		// A server without nodes answers with an error; go on without.
		var re *svrconn.ReplyError
		if !errors.As(err, &re) {
			return nil, fmt.Errorf("status node: %w", err)
		}
	}
	for _, o := range nodes {
		w.Nodes = append(w.Nodes, world.FromNode(o.Name, o.Attrs))
	}
	finishMoms := d.startMomQueries(ctx, w.Nodes)
	if len(w.Nodes) <= momQueries {
		finishMoms()
	}
	w.Queues, err = readQueues(conn)
	finishMoms()
	if err != nil {
		return nil, err
	}
	if w.Reservations, err = d.readReservations(conn, w.Queues); err != nil {
		return nil, err
	}
	return w, nil
}

// readQueues asks the server for its queues and the jobs of each.
func readQueues(conn *svrconn.Conn) ([]*world.Queue, error) {
	queues, err := conn.StatusQueue()
	if err != nil {
		return nil, fmt.Errorf("status queue: %w", err)
	}
	var out []*world.Queue
	for _, o := range queues {
		q := world.FromQueue(o.Name, o.Attrs)
		jobs, err := conn.SelStatQueue(q.Name)
		if err != nil {
			return nil, fmt.Errorf("select jobs of %s: %w", q.Name, err)
		}
		q.Jobs = make([]*world.Job, 0, len(jobs))
		for _, jo := range jobs {
			q.Jobs = append(q.Jobs, world.FromJob(jo.Name, q, jo.Attrs))
		}
		out = append(out, q)
	}
	return out, nil
}

// Cycle runs one scheduling cycle over conn.
func (d *Daemon) Cycle(ctx context.Context, conn *svrconn.Conn) (policy.Stats, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.Log.Hold() // a line per job: written in large pieces
	defer d.Log.Release()
	if skip, err := d.hello(conn); skip || err != nil {
		return policy.Stats{}, err
	}
	w, err := d.ReadWorld(ctx, conn)
	if err != nil {
		return policy.Stats{}, err
	}
	st := d.running.Cycle(w, serverActions{conn})
	if d.Sched != nil && d.Sched.FairShare != nil {
		if sync := d.Sched.Config.SyncTime; sync > 0 && d.Now().Sub(d.lastSync) >= sync {
			d.saveUsage()
		}
	}
	if !d.brkLogged {
		d.brkLogged = true
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		d.Log.Log(logline.EventDebug, logline.ClassServer, "main", fmt.Sprintf("brk point %d", ms.HeapSys))
	}
	return st, nil
}
