package attr

import "sync"

// perm builds a Perm from the Read and Write columns of the spec tables
// ("UOM", "OMS", "-", ...).
func perm(read, write string) Perm {
	var p Perm
	for _, c := range read {
		switch c {
		case 'U':
			p |= ReadUser
		case 'O':
			p |= ReadOper
		case 'M':
			p |= ReadMgr
		}
	}
	for _, c := range write {
		switch c {
		case 'U':
			p |= WriteUser
		case 'O':
			p |= WriteOper
		case 'M':
			p |= WriteMgr
		case 'S':
			p |= WriteServer
		}
	}
	return p
}

var (
	defaultResources = sync.OnceValue(func() *Resources { return newResources(defaultResourceDefs()) })
	jobTable         = sync.OnceValue(func() *Table { return newTable(ObjJob, jobDefs(), defaultResources()) })
	queueTable       = sync.OnceValue(func() *Table { return newTable(ObjQueue, queueDefs(), defaultResources()) })
	serverTable      = sync.OnceValue(func() *Table { return newTable(ObjServer, serverDefs(), defaultResources()) })
	nodeTable        = sync.OnceValue(func() *Table { return newTable(ObjNode, nodeDefs(), defaultResources()) })
)

// DefaultResources returns the resources known by default (spec 04 §9).
func DefaultResources() *Resources { return defaultResources() }

// JobTable returns the job attribute definitions in definition order.
func JobTable() *Table { return jobTable() }

// QueueTable returns the queue attribute definitions in definition order.
func QueueTable() *Table { return queueTable() }

// ServerTable returns the server attribute definitions in definition order.
func ServerTable() *Table { return serverTable() }

// NodeTable returns the node attribute definitions in definition order.
func NodeTable() *Table { return nodeTable() }
