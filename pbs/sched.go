package pbs

import "gopbs/batchreq"

// StatusSched returns the status of one sched object (name) or of all
// (name ""), a GoPBS request (issue 18).
func (c *Conn) StatusSched(name string, attrs []Attr) ([]Status, error) {
	return c.status(batchreq.PBS_BATCH_StatusSched, name, attrs, "")
}

// SchedHello names the scheduler on this connection (GoPBS): from then
// on the connection sees only that scheduler's slice of the cluster. It
// returns the scheduler's own object.
func (c *Conn) SchedHello(name string) ([]Status, error) {
	return c.status(batchreq.PBS_BATCH_SchedHello, name, nil, "")
}
