package state

import (
	"gopbs/attr"
	"gopbs/server/store"
)

// Store is where a transaction's batch is made durable: the server's
// store (*store.Bolt). Submit queues the batch and returns the wait for
// its fsync; SubmitLogged's wait returns once the batch is in the log.
type Store interface {
	Submit(ops ...store.Op) func() error
	SubmitLogged(ops ...store.Op) func() error
}

// DB is the state as transactions change it: the job table, the server's
// attributes and next job number, and the store batches go to. The
// server holds one DB over its own tables; nothing here locks (the
// server's lock is held over a transaction from Begin to Commit).
type DB struct {
	Store   Store
	Jobs    *Jobs
	Attrs   *Attrs
	NextJob *int64
}

// Begin starts a transaction.
func (db *DB) Begin() *Txn {
	t := &Txn{db: db}
	t.entries = t.first[:0]
	return t
}

// Txn is one change of the state, in the manner of Nomad's state store:
// its typed methods make the change in memory (keeping the job table's
// counts and indices right through Jobs) and note what must be made
// durable; Ops yields the store batch and Commit submits it. A job noted
// more than once is saved once, as it is when the batch is taken, so a
// change made after SaveJob in the same transaction is not lost.
//
// A Txn belongs to one goroutine holding the server's lock.
type Txn struct {
	db      *DB
	entries []entry
	saved   map[*Job]int // index in entries of a job's pending save (past smallTxn)
	// first holds the first entries, so that a transaction of a few
	// operations (a submission's: the job, its script, the server)
	// allocates once.
	first [4]entry
}

// entry is one operation of the batch: a job to encode when the batch is
// taken, or an operation ready made.
type entry struct {
	job *Job
	op  store.Op
	off bool // dropped (a later delete of the same job)
}

// Jobs returns the job table the transaction changes.
func (t *Txn) Jobs() *Jobs { return t.db.Jobs }

// SaveJob notes that a job changed: it is saved with the batch.
func (t *Txn) SaveJob(j *Job) {
	if t.pending(j) >= 0 {
		return
	}
	if t.saved != nil {
		t.saved[j] = len(t.entries)
	} else if len(t.entries) >= smallTxn {
		// past a few operations (a qdel of an array, a purge) an index
		// keeps SaveJob constant-time
		t.saved = make(map[*Job]int, 2*smallTxn)
		for i, e := range t.entries {
			if e.job != nil && !e.off {
				t.saved[e.job] = i
			}
		}
		t.saved[j] = len(t.entries)
	}
	t.entries = append(t.entries, entry{job: j})
}

// smallTxn is the number of operations up to which a transaction finds a
// job's pending save by walking its entries (a submission's transaction
// allocates no index).
const smallTxn = 8

// pending returns the index in entries of a job's pending save, or -1.
func (t *Txn) pending(j *Job) int {
	if t.saved != nil {
		if i, ok := t.saved[j]; ok {
			return i
		}
		return -1
	}
	for i, e := range t.entries {
		if e.job == j && !e.off {
			return i
		}
	}
	return -1
}

// SetState changes a job's state and substate (Jobs.SetState) and notes
// the job as changed.
func (t *Txn) SetState(j *Job, st attr.JobStateNum, sub attr.Substate) {
	t.db.Jobs.SetState(j, st, sub)
	t.SaveJob(j)
}

// Dequeue takes a job out of its queue (Jobs.Dequeue), noting it as
// changed.
func (t *Txn) Dequeue(j *Job) {
	t.db.Jobs.Dequeue(j)
	t.SaveJob(j)
}

// Enqueue puts a job into q (Jobs.Enqueue), noting it as changed.
func (t *Txn) Enqueue(j *Job, q *Queue) {
	t.db.Jobs.Enqueue(j, q)
	t.SaveJob(j)
}

// Add enters a new job into the table and into q (Jobs.Link,
// Jobs.Enqueue) and notes it as changed.
func (t *Txn) Add(j *Job, q *Queue) {
	t.db.Jobs.Link(j)
	t.db.Jobs.Enqueue(j, q)
	t.SaveJob(j)
}

// Remove takes a job out of its queue and the table (Jobs.Dequeue,
// Jobs.Unlink) and deletes its record and script from the store.
func (t *Txn) Remove(j *Job) {
	t.db.Jobs.Dequeue(j)
	t.db.Jobs.Unlink(j)
	t.DeleteJob(j)
}

// DeleteJob deletes a job's record and script from the store, dropping a
// pending save of it.
func (t *Txn) DeleteJob(j *Job) {
	if i := t.pending(j); i >= 0 {
		t.entries[i].off = true
		delete(t.saved, j)
	}
	for _, op := range DeleteJob(j) {
		t.entries = append(t.entries, entry{op: op})
	}
}

// SaveScript saves a job's script under key (ScriptKey).
func (t *Txn) SaveScript(key string, script []byte) {
	t.Put(store.Put(store.Script, key, script))
}

// SaveQueue saves a queue.
func (t *Txn) SaveQueue(q *Queue) { t.Put(SaveQueue(q)) }

// DeleteQueue deletes the queue name from the store.
func (t *Txn) DeleteQueue(name string) { t.Put(store.Del(store.Queues, name)) }

// SaveNode saves a node.
func (t *Txn) SaveNode(n *Node) { t.Put(SaveNode(n)) }

// DeleteNode deletes the node name from the store.
func (t *Txn) DeleteNode(name string) { t.Put(store.Del(store.Nodes, name)) }

// SaveServer saves the server's attributes and next job number as they
// are now.
func (t *Txn) SaveServer() { t.Put(SaveServer(*t.db.Attrs, *t.db.NextJob)) }

// Put adds store operations made elsewhere (e.g. Tracking.Track's).
func (t *Txn) Put(ops ...store.Op) {
	for _, op := range ops {
		t.entries = append(t.entries, entry{op: op})
	}
}

// Empty reports whether the transaction has nothing to make durable.
func (t *Txn) Empty() bool {
	for _, e := range t.entries {
		if !e.off {
			return false
		}
	}
	return true
}

// Ops returns the store batch that makes the transaction durable, the
// noted jobs encoded as they are now. The transaction may go on; a later
// Ops returns the operations noted since.
func (t *Txn) Ops() []store.Op {
	ops := make([]store.Op, 0, len(t.entries))
	for _, e := range t.entries {
		switch {
		case e.off:
		case e.job != nil:
			ops = append(ops, SaveJob(e.job))
		default:
			ops = append(ops, e.op)
		}
	}
	t.entries, t.saved = t.entries[:0], nil
	return ops
}

// Commit submits the batch to the store and returns the wait for it to be
// durable (nil error: durable). It is called under the server's lock,
// which fixes the order of batches; the wait is done after the lock is
// released so that concurrent changes share an fsync.
func (t *Txn) Commit() func() error { return t.db.Store.Submit(t.Ops()...) }

// CommitLogged is Commit acknowledged once the batch is in the store's
// log (store.Bolt.SubmitLogged).
func (t *Txn) CommitLogged() func() error { return t.db.Store.SubmitLogged(t.Ops()...) }
