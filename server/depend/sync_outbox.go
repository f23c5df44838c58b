package depend

import (
	"strings"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/state"
	"gopbs/server/syncset"
)

// send queues a RegisterDependency for the server named in ref
// ("id@server[:port]") in the table's outbox, stored with the table (in
// tx), and starts its delivery.
func (sy *Sync) send(tx *state.Txn, ref string, body *batchreq.RegistDep) {
	_, srv, _ := strings.Cut(ref, "@")
	seq := sy.table.Post(syncset.Message{To: srv, Op: body.Op, Owner: body.Owner, Parent: body.ParentID, Child: body.ChildID, Cost: body.Cost})
	if seq == 0 {
		sy.g.log.Logf(logline.EventJob, logline.ClassJob, body.ParentID, "sync set: cannot send to server %q", srv)
		return
	}
	sy.save(tx)
	sy.deliver(tx)
}

// Deliver starts the delivery of the outbox messages that are due (the
// server's timer calls it every second). It takes the server's lock.
func (sy *Sync) Deliver() {
	sy.lock.Lock()
	defer sy.lock.Unlock()
	tx := sy.g.db.Begin()
	sy.deliver(tx)
	if !tx.Empty() {
		tx.Commit()
	}
}

// deliver is Deliver with the lock held, in tx. A failed attempt is
// tried again after a delay that doubles up to a minute; a refused
// message is dropped (a refused Register puts its member on user hold,
// as a refused local registration does).
func (sy *Sync) deliver(tx *state.Txn) {
	if sy.g.host.Shutting() {
		return
	}
	now := time.Now()
	for _, m := range sy.table.Outbox() {
		if sy.busy[m.Seq] || now.Before(sy.next[m.Seq]) {
			continue
		}
		addr, ok := sy.g.host.Destination(m.To)
		if !ok {
			sy.g.log.Logf(logline.EventJob, logline.ClassJob, m.Parent, "sync set: cannot reach server %q", m.To)
			sy.table.Delivered(m.Seq)
			sy.save(tx)
			continue
		}
		if sy.busy == nil {
			sy.busy, sy.next, sy.tries = map[uint64]bool{}, map[uint64]time.Time{}, map[uint64]int{}
		}
		sy.busy[m.Seq] = true
		go sy.attempt(m, addr)
	}
}

// attempt sends one outbox message once.
func (sy *Sync) attempt(m syncset.Message, addr string) {
	p, err := sy.g.host.SendRegistDep(addr, &batchreq.RegistDep{Owner: m.Owner, ParentID: m.Parent,
		ChildID: m.Child, DepType: batchreq.JOB_DEPEND_TYPE_SYNCWITH, Op: m.Op, Cost: m.Cost})
	sy.lock.Lock()
	defer sy.lock.Unlock()
	delete(sy.busy, m.Seq)
	if sy.g.host.Shutting() {
		return
	}
	name := batchreq.RequestName(batchreq.PBS_BATCH_RegistDep)
	if err != nil {
		n := sy.tries[m.Seq]
		sy.tries[m.Seq] = n + 1
		sy.next[m.Seq] = time.Now().Add(min(time.Duration(1)<<n*time.Second, time.Minute))
		if n == 0 || n%10 == 0 {
			sy.g.log.Logf(logline.EventJob, logline.ClassJob, m.Parent, "sync set: %s (op %d) to %s failed: %v", name, m.Op, addr, err)
		}
		return
	}
	delete(sy.tries, m.Seq)
	delete(sy.next, m.Seq)
	sy.table.Delivered(m.Seq)
	tx := sy.g.db.Begin()
	sy.save(tx)
	if p.Code != 0 {
		sy.g.log.Logf(logline.EventJob, logline.ClassJob, m.Parent, "sync set: %s (op %d) to %s refused: %d %s", name, m.Op, addr, p.Code, p.Text)
		if m.Op == batchreq.JOB_DEPEND_OP_REGISTER {
			sy.refused(tx, m.Child)
		}
	}
	// nothing waits for the outbox's batches: the store keeps their
	// order with the others'
	tx.Commit()
}

// refused puts member ref ("id@server", a job here) on user hold, in
// tx: its master's server refused its registration.
func (sy *Sync) refused(tx *state.Txn, ref string) {
	j := sy.g.Find(jobPart(ref))
	if j == nil {
		return
	}
	sy.g.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job held for unknown job dep, use 'qrls' to release")
	j.Hold |= state.HoldUser
	sy.g.Evaluate(tx, j)
	sy.g.touch(j)
	tx.SaveJob(j)
}
