package syncset

import "slices"

// Message is a RegisterDependency this server owes another server (a
// registration, release, ready, unregistration or delete). It is kept
// in the table, and so stored, until it is delivered: a request that
// follows from an acknowledged change survives a restart of the server
// and an outage of the other one.
type Message struct {
	Seq    uint64 // assigned by Post, increasing
	To     string // the other server, host[:port]
	Op     int    // RegisterDependency operation (batchreq.JOB_DEPEND_OP_*)
	Owner  string // the job's owner, user name ("" for none)
	Parent string // the job on the receiving server
	Child  string // the other job, "id@server"
	Cost   int64  // a registering job's cost
}

// Post queues m (its Seq is assigned) and returns its sequence number,
// or 0 when a field holds white space and cannot be kept.
func (t *Table) Post(m Message) uint64 {
	for _, f := range []string{m.To, m.Parent, m.Child} {
		if !validJob(f) {
			return 0
		}
	}
	if m.Owner != "" && !validJob(m.Owner) {
		return 0
	}
	t.lastSeq++
	m.Seq = t.lastSeq
	t.outbox = append(t.outbox, m)
	return m.Seq
}

// Delivered forgets message seq.
func (t *Table) Delivered(seq uint64) {
	t.outbox = slices.DeleteFunc(t.outbox, func(m Message) bool { return m.Seq == seq })
}

// Outbox returns the messages not delivered yet, oldest first.
func (t *Table) Outbox() []Message { return slices.Clone(t.outbox) }
