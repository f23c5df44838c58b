package schedulers

import "gopbs/batchreq"

// The partition rules of queues and nodes (seed 003, interfaces 5 and 6).
// A queue or node belongs to the partition its partition attribute names,
// or to none; a node may also be linked to one queue (its queue
// attribute), and then the node and its queue must be of the same
// partition.

// QueueUpdate is a change of a queue as the partition rules see it.
type QueueUpdate struct {
	Name               string
	OldPart, NewPart   string
	OldRoute, NewRoute bool
	// NodeParts holds the partitions of the nodes linked to the queue
	// (their queue attribute names it).
	NodeParts []string
}

// CheckQueue returns the refusal of a queue change, or nil:
// PBSE_ROUTE_QUE_NO_PART for a partition given to a route queue,
// PBSE_CANNOT_SET_ROUTE for a queue with a partition made a route queue,
// PBSE_INVALID_PART_QUE for a partition other than its nodes'.
func CheckQueue(u QueueUpdate) *batchreq.Reply {
	if u.NewRoute && u.NewPart != "" {
		if u.NewPart != u.OldPart {
			return batchreq.TextReply(batchreq.PBSE_ROUTE_QUE_NO_PART, batchreq.ErrorText(batchreq.PBSE_ROUTE_QUE_NO_PART))
		}
		return batchreq.TextReply(batchreq.PBSE_CANNOT_SET_ROUTE, batchreq.ErrorText(batchreq.PBSE_CANNOT_SET_ROUTE)+"queue_type")
	}
	if u.NewPart != u.OldPart {
		for _, p := range u.NodeParts {
			if p != u.NewPart {
				return batchreq.TextReply(batchreq.PBSE_INVALID_PART_QUE, batchreq.ErrorText(batchreq.PBSE_INVALID_PART_QUE))
			}
		}
	}
	return nil
}

// NodeUpdate is a change of a node as the partition rules see it.
type NodeUpdate struct {
	OldPart, NewPart   string
	OldQueue, NewQueue string
	// QueuePart returns the partition of a queue and whether the queue
	// exists.
	QueuePart func(queue string) (string, bool)
}

// CheckNode returns the refusal of a node change, or nil: PBSE_UNKQUE
// for a queue that does not exist, PBSE_PART_NOT_IN_QUE when the node is
// linked to a queue of another partition ("Partition p1 is not part of
// queue for node"), PBSE_QUE_NOT_IN_PART when a node linked to a queue
// is given another partition ("Queue q1 is not part of partition for
// node").
func CheckNode(u NodeUpdate) *batchreq.Reply {
	if u.NewQueue == "" {
		return nil
	}
	qp, ok := u.QueuePart(u.NewQueue)
	if !ok {
		return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", "")
	}
	if qp == u.NewPart {
		return nil
	}
	if u.NewQueue != u.OldQueue {
		return batchreq.TextReply(batchreq.PBSE_PART_NOT_IN_QUE, "Partition "+u.NewPart+" is not part of queue for node")
	}
	return batchreq.TextReply(batchreq.PBSE_QUE_NOT_IN_PART, "Queue "+u.NewQueue+" is not part of partition for node")
}
