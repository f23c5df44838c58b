package state

import "gopbs/server/store"

// The functions below build the store operations that make a change of
// the state durable. A change collects them in one batch, submitted under
// the server's lock (which fixes the order of batches) and waited for
// after it is released, so that concurrent changes share an fsync.

// SaveJob returns the operation saving a job.
func SaveJob(j *Job) store.Op { return store.Put(store.Jobs, j.ID, EncodeJob(j)) }

// SaveQueue returns the operation saving a queue.
func SaveQueue(q *Queue) store.Op { return store.Put(store.Queues, q.Name, EncodeQueue(q)) }

// SaveNode returns the operation saving a node.
func SaveNode(n *Node) store.Op { return store.Put(store.Nodes, n.Name, EncodeNode(n)) }

// SaveServer returns the operation saving the server's attributes and
// next job number.
func SaveServer(attrs Attrs, next int64) store.Op {
	return store.Put(store.Server, "attributes", EncodeServer(attrs, next))
}

// DeleteJob returns the operations deleting a job and its script (array
// sub-jobs share their template's script, which goes with the template).
func DeleteJob(j *Job) []store.Op {
	return []store.Op{store.Del(store.Jobs, j.ID), store.Del(store.Script, ScriptKey(j))}
}
