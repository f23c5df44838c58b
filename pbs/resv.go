package pbs

import (
	"time"

	"gopbs/batchreq"
)

// This file holds the client calls of GoPBS's own reservation requests
// (issue 17): one method per request, authenticated like every other.

func resvFlags(transaction bool) int {
	if transaction {
		return batchreq.ResvFlagTransaction
	}
	return 0
}

// ResvSubmit asks for a reservation with the given attributes
// (batchreq.ATTR_resv_*); with transaction it waits for ResvCommit or
// ResvAbort (plus_reserve -T). It returns the new reservation's id.
func (c *Conn) ResvSubmit(attrs []Attr, transaction bool) (string, error) {
	rp, err := c.roundTrip(c.request(batchreq.PBS_BATCH_ResvSubmit,
		&batchreq.ResvSubmit{Flags: resvFlags(transaction), Attrs: opList(attrs)}, ""))
	if err != nil {
		return "", err
	}
	return rp.JobID, nil
}

func (c *Conn) resvID(typ int, id, owner string, transaction bool) error {
	_, err := c.roundTrip(c.request(typ, &batchreq.ResvID{ID: id, Owner: owner, Flags: resvFlags(transaction)}, ""))
	return err
}

// ResvCommit applies the operation waiting on reservation id.
func (c *Conn) ResvCommit(id string) error {
	return c.resvID(batchreq.PBS_BATCH_ResvCommit, id, "", false)
}

// ResvAbort drops the operation waiting on reservation id.
func (c *Conn) ResvAbort(id string) error {
	return c.resvID(batchreq.PBS_BATCH_ResvAbort, id, "", false)
}

// ResvModify changes reservation id (resv_start, resv_end, resv_nodect,
// resv_users).
func (c *Conn) ResvModify(id string, attrs []Attr, transaction bool) error {
	_, err := c.roundTrip(c.request(batchreq.PBS_BATCH_ResvModify,
		&batchreq.ResvModify{ID: id, Flags: resvFlags(transaction), Attrs: opList(attrs)}, ""))
	return err
}

// ResvCancel cancels reservation id, or (id "") every reservation of
// owner.
func (c *Conn) ResvCancel(id, owner string, transaction bool) error {
	return c.resvID(batchreq.PBS_BATCH_ResvCancel, id, owner, transaction)
}

// ResvDestroy discards reservation id, or (id "") every reservation of
// owner.
func (c *Conn) ResvDestroy(id, owner string, transaction bool) error {
	return c.resvID(batchreq.PBS_BATCH_ResvDestroy, id, owner, transaction)
}

// ResvStatus returns the reservations the selection names (see
// batchreq.ResvStatus), as objects of type batchreq.MGR_OBJ_RESV.
func (c *Conn) ResvStatus(sel batchreq.ResvStatus) ([]Status, error) {
	rp, err := c.roundTrip(c.request(batchreq.PBS_BATCH_ResvStatus, &sel, ""))
	if err != nil {
		return nil, err
	}
	return statusObjects(rp.Status), nil
}

// ResvAvailNodes returns the nodes that could be reserved from start to
// end with the requirements in attrs (resv_mem, resv_ncpu, ...), one
// node object each.
func (c *Conn) ResvAvailNodes(start, end time.Time, attrs []Attr) ([]Status, error) {
	rp, err := c.roundTrip(c.request(batchreq.PBS_BATCH_ResvAvailNodes,
		&batchreq.ResvAvail{Start: start.Unix(), End: end.Unix(), Attrs: opList(attrs)}, ""))
	if err != nil {
		return nil, err
	}
	return statusObjects(rp.Status), nil
}
