package plus

import (
	"fmt"
	"strconv"
	"time"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/resv"
)

// Cancel is plus_cancel [-T] [-r rsvID] [-o owner]: it cancels one
// reservation, or every reservation of owner. The nodes are released and
// the record kept (seed §3.1.5).
func Cancel(env *Env, args []string) int {
	return cancelDestroy(env, args, "plus_cancel", false)
}

// Destroy is plus_destroy [-T] [-r rsvID] [-o owner]: as plus_cancel,
// and the record is discarded.
func Destroy(env *Env, args []string) int {
	return cancelDestroy(env, args, "plus_destroy", true)
}

func cancelDestroy(env *Env, args []string, prog string, destroy bool) int {
	c := &cmd{Env: env, prog: prog, usage: prog + " [-T] [-r rsvID] [-o owner]"}
	if wantsHelp(args) {
		return c.help()
	}
	o, err := options(args, map[string]optKind{"T": flag, "r": value, "o": value})
	if err != nil {
		return c.usageError("%v", err)
	}
	id, hasR := o["r"]
	owner, hasO := o["o"]
	_, transaction := o["T"]
	switch {
	case hasR == hasO:
		return c.usageError("give -r rsvID or -o owner")
	case hasO && transaction:
		// Seed §2.4: -o cannot be used with -T.
		return c.usageError("-o owner cannot be used with -T")
	case hasO && owner == "":
		return c.usageError("-o needs an owner")
	}
	if hasR {
		if id, err = normID(id); err != nil {
			return c.badValue(err)
		}
	}
	conn, code := c.connect()
	if conn == nil {
		return code
	}
	defer conn.Close()
	what := id
	if hasO {
		what = "reservations of " + owner
	}
	if destroy {
		err = conn.ResvDestroy(id, owner, transaction)
	} else {
		err = conn.ResvCancel(id, owner, transaction)
	}
	if err != nil {
		return c.failed(what, err)
	}
	return ExitOK
}

const modifyUsage = "plus_modify [-T] -r rsvID [-s startTime] [-e endTime | -D duration] [-n numNodes] [-U users]"

// Modify is plus_modify: it changes the window, the number of nodes or
// the users of a reservation. -D alone keeps the start and sets the end
// to start + duration (the start is asked of the server).
func Modify(env *Env, args []string) int {
	c := &cmd{Env: env, prog: "plus_modify", usage: modifyUsage}
	if wantsHelp(args) {
		return c.help()
	}
	o, err := options(args, map[string]optKind{"T": flag, "r": value, "s": value, "e": value, "D": value,
		"n": value, "U": value})
	if err != nil {
		return c.usageError("%v", err)
	}
	id, ok := o["r"]
	if !ok {
		return c.usageError("-r rsvID is required")
	}
	if id, err = normID(id); err != nil {
		return c.badValue(err)
	}
	if !has(o, "s") && !has(o, "e") && !has(o, "D") && !has(o, "n") && !has(o, "U") {
		return c.usageError("nothing to change: give -s, -e, -D, -n or -U")
	}
	ch := &resv.Change{}
	if v, ok := o["n"]; ok {
		if ch.NodeCount, err = strconv.Atoi(v); err != nil || ch.NodeCount < 1 {
			return c.badValue(fmt.Errorf("bad -n %q: want a number of nodes of at least 1", v))
		}
	}
	if v, ok := o["U"]; ok {
		ch.Users, ch.SetUsers = splitNames(v), true
	}
	if has(o, "e") && has(o, "D") {
		return c.usageError("give -e endTime or -D duration, not both")
	}
	dOnly := has(o, "D") && !has(o, "s")
	if !dOnly {
		if code := c.window(o, &ch.Start, &ch.End, false); code != ExitOK {
			return code
		}
		if !ch.Start.IsZero() && !ch.End.IsZero() && !ch.End.After(ch.Start) {
			return c.badValue(fmt.Errorf("end %s is not after start %s", ch.End.Format(resv.TimeLayout), ch.Start.Format(resv.TimeLayout)))
		}
	}
	var dur time.Duration
	if dOnly {
		if dur, err = resv.ParseDuration(o["D"]); err != nil {
			return c.badValue(err)
		}
	}
	conn, code := c.connect()
	if conn == nil {
		return code
	}
	defer conn.Close()
	if dOnly {
		objs, err := conn.ResvStatus(batchreq.ResvStatus{ID: id, Expired: -1})
		if err != nil {
			return c.failed(id, err)
		}
		if len(objs) != 1 {
			return c.failed(id, fmt.Errorf("no such reservation"))
		}
		s := &objs[0]
		r, err := resv.FromAttrs(id, func(name string) (string, bool) { return s.Get(name, "") })
		if err != nil || r.Start.IsZero() {
			return c.failed(id, fmt.Errorf("the server did not say when it starts"))
		}
		ch.End = r.Start.Add(dur)
	}
	_, transaction := o["T"]
	if err := conn.ResvModify(id, toPBS(ch.ChangeAttrs()), transaction); err != nil {
		return c.failed(id, err)
	}
	return ExitOK
}

const availUsage = "plus_availnodes -s startTime -e endTime [-x] [-partition name]"

// AvailNodes is plus_availnodes -s startTime -e endTime [-x] [-partition
// name]: it prints how many nodes could be reserved for the whole window
// (with -x, the count and the node names as XML). Without -partition it
// counts the nodes of no partition, the ones a reservation without
// -partition may hold; with -partition (a GoPBS option, as plus_reserve's)
// the nodes of that partition.
func AvailNodes(env *Env, args []string) int {
	c := &cmd{Env: env, prog: "plus_availnodes", usage: availUsage}
	if wantsHelp(args) {
		return c.help()
	}
	o, err := options(args, map[string]optKind{"s": value, "e": value, "x": flag, "partition": value})
	if err != nil {
		return c.usageError("%v", err)
	}
	if !has(o, "s") || !has(o, "e") {
		return c.usageError("-s startTime and -e endTime are required")
	}
	var start, end time.Time
	if code := c.window(o, &start, &end, true); code != ExitOK {
		return code
	}
	if !end.After(start) {
		return c.badValue(fmt.Errorf("end %s is not after start %s", end.Format(resv.TimeLayout), start.Format(resv.TimeLayout)))
	}
	var attrs []pbs.Attr
	part, hasPart := o["partition"]
	if hasPart {
		if !onePartition(part) {
			return c.usageError("-partition takes one partition name")
		}
		attrs = append(attrs, pbs.Attr{Name: batchreq.ATTR_resv_partition, Value: part})
	}
	conn, code := c.connect()
	if conn == nil {
		return code
	}
	defer conn.Close()
	nodes, err := conn.ResvAvailNodes(start, end, attrs)
	if err != nil {
		return c.failed("cannot get the available nodes", err)
	}
	if has(o, "x") {
		out := xmlAvail{Start: start.In(c.loc()).Format(resv.TimeLayout), End: end.In(c.loc()).Format(resv.TimeLayout),
			Partition: part, Count: len(nodes)}
		if len(nodes) > 0 {
			out.Nodes = &xmlList{}
		}
		for _, n := range nodes {
			out.Nodes.Nodes = append(out.Nodes.Nodes, n.Name)
		}
		writeXML(c.Stdout, out)
		return ExitOK
	}
	fmt.Fprintln(c.Stdout, len(nodes))
	return ExitOK
}
