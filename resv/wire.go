package resv

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopbs/batchreq"
)

// SubmitAttrs returns the attributes of a ResvSubmit request for r: the
// window, the nodes, the users and the requirements.
func (r *Reservation) SubmitAttrs() batchreq.AttrList {
	var l batchreq.AttrList
	add := func(name, value string) { l = append(l, batchreq.NewAttr(name, value)) }
	add(batchreq.ATTR_resv_start, unixString(r.Start))
	add(batchreq.ATTR_resv_end, unixString(r.End))
	if len(r.Nodes) > 0 {
		add(batchreq.ATTR_resv_nodes, strings.Join(r.Nodes, "+"))
	} else {
		add(batchreq.ATTR_resv_nodect, strconv.Itoa(r.NodeCount))
	}
	if len(r.Users) > 0 {
		add(batchreq.ATTR_resv_users, strings.Join(r.Users, ","))
	}
	q := &r.Req
	if q.MemBytes > 0 {
		add(batchreq.ATTR_resv_mem, strconv.FormatInt(q.MemBytes, 10))
	}
	if q.NCPU > 0 {
		add(batchreq.ATTR_resv_ncpu, strconv.Itoa(q.NCPU))
	}
	if q.Slots > 0 {
		add(batchreq.ATTR_resv_slots, strconv.Itoa(q.Slots))
	}
	if q.Arch != "" {
		add(batchreq.ATTR_resv_arch, q.Arch)
	}
	if q.OS != "" {
		add(batchreq.ATTR_resv_opsys, q.OS)
	}
	if s := q.LString(); s != "" {
		add(batchreq.ATTR_resv_resources, s)
	}
	if r.Partition != "" {
		add(batchreq.ATTR_resv_partition, r.Partition)
	}
	return l
}

// StatusAttrs returns every attribute of r as a Status reply carries it:
// SubmitAttrs and the owner, duration, state, pending operation,
// assigned nodes and creation time.
func (r *Reservation) StatusAttrs() batchreq.AttrList {
	l := batchreq.AttrList{batchreq.NewAttr(batchreq.ATTR_resv_owner, r.Owner)}
	l = append(l, r.SubmitAttrs()...)
	add := func(name, value string) { l = append(l, batchreq.NewAttr(name, value)) }
	add(batchreq.ATTR_resv_duration, strconv.FormatInt(int64(r.Duration()/time.Second), 10))
	add(batchreq.ATTR_resv_state, r.State.String())
	if r.Pending != OpNone {
		add(batchreq.ATTR_resv_pending, r.Pending.String())
	}
	if len(r.Assigned) > 0 {
		add(batchreq.ATTR_resv_exec, strings.Join(r.Assigned, "+"))
	}
	if !r.Created.IsZero() {
		add(batchreq.ATTR_resv_ctime, unixString(r.Created))
	}
	return l
}

// ChangeAttrs returns the attributes of a ResvModify request for c.
func (c *Change) ChangeAttrs() batchreq.AttrList {
	var l batchreq.AttrList
	add := func(name, value string) { l = append(l, batchreq.NewAttr(name, value)) }
	if !c.Start.IsZero() {
		add(batchreq.ATTR_resv_start, unixString(c.Start))
	}
	if !c.End.IsZero() {
		add(batchreq.ATTR_resv_end, unixString(c.End))
	}
	if c.NodeCount > 0 {
		add(batchreq.ATTR_resv_nodect, strconv.Itoa(c.NodeCount))
	}
	if c.SetUsers {
		add(batchreq.ATTR_resv_users, strings.Join(c.Users, ","))
	}
	return l
}

func unixString(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.Unix(), 10)
}

// FromAttrs builds a reservation from the attributes of a ResvSubmit
// request or a Status reply object (get returns an attribute's value).
// Unknown attributes are ignored; a malformed value is an error naming
// the attribute.
func FromAttrs(id string, get func(name string) (string, bool)) (*Reservation, error) {
	r := &Reservation{ID: id}
	var err error
	str := func(name string, dst *string) {
		if v, ok := get(name); ok {
			*dst = v
		}
	}
	num := func(name string, dst *int) {
		if v, ok := get(name); ok && err == nil {
			n, e := strconv.Atoi(v)
			if e != nil || n < 0 {
				err = fmt.Errorf("bad %s %q", name, v)
			}
			*dst = n
		}
	}
	when := func(name string, dst *time.Time) {
		if v, ok := get(name); ok && err == nil {
			n, e := strconv.ParseInt(v, 10, 64)
			if e != nil || n < 0 || n > 1<<40 {
				err = fmt.Errorf("bad %s %q", name, v)
			} else if n > 0 {
				*dst = time.Unix(n, 0)
			}
		}
	}
	list := func(name, sep string) []string {
		if v, ok := get(name); ok && v != "" {
			return strings.Split(v, sep)
		}
		return nil
	}
	str(batchreq.ATTR_resv_owner, &r.Owner)
	when(batchreq.ATTR_resv_start, &r.Start)
	when(batchreq.ATTR_resv_end, &r.End)
	when(batchreq.ATTR_resv_ctime, &r.Created)
	num(batchreq.ATTR_resv_nodect, &r.NodeCount)
	r.Nodes = list(batchreq.ATTR_resv_nodes, "+")
	r.Users = list(batchreq.ATTR_resv_users, ",")
	r.Assigned = list(batchreq.ATTR_resv_exec, "+")
	if v, ok := get(batchreq.ATTR_resv_mem); ok && err == nil {
		if r.Req.MemBytes, err = strconv.ParseInt(v, 10, 64); err != nil || r.Req.MemBytes < 0 {
			err = fmt.Errorf("bad %s %q", batchreq.ATTR_resv_mem, v)
		}
	}
	num(batchreq.ATTR_resv_ncpu, &r.Req.NCPU)
	num(batchreq.ATTR_resv_slots, &r.Req.Slots)
	str(batchreq.ATTR_resv_arch, &r.Req.Arch)
	str(batchreq.ATTR_resv_opsys, &r.Req.OS)
	str(batchreq.ATTR_resv_partition, &r.Partition)
	if v, ok := get(batchreq.ATTR_resv_resources); ok && v != "" && err == nil {
		r.Req.Attrs, r.Req.Props, err = ParseL(v)
	}
	if v, ok := get(batchreq.ATTR_resv_state); ok && err == nil {
		if r.State, ok = ParseState(v); !ok {
			err = fmt.Errorf("bad %s %q", batchreq.ATTR_resv_state, v)
		}
	}
	if v, ok := get(batchreq.ATTR_resv_pending); ok && err == nil {
		if r.Pending, ok = ParseOp(v); !ok {
			err = fmt.Errorf("bad %s %q", batchreq.ATTR_resv_pending, v)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reservation %s: %w", id, err)
	}
	return r, nil
}

// ChangeFromAttrs reads a ResvModify request's attributes.
func ChangeFromAttrs(get func(name string) (string, bool)) (*Change, error) {
	r, err := FromAttrs("", get)
	if err != nil {
		return nil, err
	}
	c := &Change{Start: r.Start, End: r.End, NodeCount: r.NodeCount, Users: r.Users}
	_, c.SetUsers = get(batchreq.ATTR_resv_users)
	return c, nil
}
