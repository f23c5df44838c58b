package state

import "gopbs/attr"

// DefaultServerAttrs returns the server attributes of a new database, as
// pbs_server -t create sets them: the server starts on them when its
// store holds no server record, and pbs_import's database starts from
// them before the TORQUE server's own attributes are set over them.
func DefaultServerAttrs() Attrs {
	var a Attrs
	a.Set(attr.SrvSchedulerIteration, "600")
	a.Set(attr.SrvNodeCheckRate, "150")
	a.Set(attr.SrvTCPTimeout, "6")
	a.Set(attr.SrvLogEvents, "511")
	a.Set(attr.SrvMailFrom, "adm")
	a.Set(attr.SrvScheduling, "False")
	return a
}

// Order numbers queues and nodes in the order they are created, one
// sequence for both kinds (Queue.Order, Node.Order): the server lists
// them, and writes server_priv/nodes, in that order. The zero Order
// numbers from 0.
type Order struct{ next int64 }

// Peek returns the number the next object created gets.
func (o *Order) Peek() int64 { return o.next }

// Next returns the number of an object being created and moves past it.
func (o *Order) Next() int64 {
	n := o.next
	o.next++
	return n
}

// Recovered notes the number of an object read back from the store, so
// that the objects created later come after it.
func (o *Order) Recovered(n int64) {
	if n >= o.next {
		o.next = n + 1
	}
}
