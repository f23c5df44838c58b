package plus

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopbs/batchreq"
	"gopbs/pbs"
	"gopbs/resv"
)

const reserveUsage = "plus_reserve [-T] -s startTime [-e endTime | -D duration] -n numNodes|node,... [-U users] " +
	"[-mem memSize] [-ncpu cpuNum] [-arch arch] [-os os] [-l attr=value[,...]] [-p] [-sn slotNum] [-x] " +
	"[-partition name]"

// Reserve is plus_reserve: it makes a reservation and prints its id
// (with -x as XML; with -p followed by the reservation as plus_status
// shows it). -n takes a count or a list of node names. -partition (a
// GoPBS option: seed 003's pbs_rsub -p, whose letter PluS gives to
// print) reserves nodes of that partition, whose scheduler runs the
// reservation's jobs. -sgeq, which names Grid Engine queues, is refused.
func Reserve(env *Env, args []string) int {
	c := &cmd{Env: env, prog: "plus_reserve", usage: reserveUsage}
	if wantsHelp(args) {
		return c.help()
	}
	o, err := options(args, map[string]optKind{"T": flag, "s": value, "e": value, "D": value, "n": value,
		"U": value, "mem": value, "ncpu": value, "arch": value, "os": value, "l": value, "p": flag,
		"sn": value, "x": flag, "sgeq": value, "partition": value})
	if err != nil {
		return c.usageError("%v", err)
	}
	if _, ok := o["sgeq"]; ok {
		return c.usageError("-sgeq names Grid Engine queues; GoPBS has none (restrict nodes with -l or sched_priv/reservable.ad)")
	}
	r := &resv.Reservation{Owner: env.User}
	if code := c.window(o, &r.Start, &r.End, true); code != ExitOK {
		return code
	}
	n, ok := o["n"]
	if !ok {
		return c.usageError("-n numNodes is required")
	}
	if count, err := strconv.Atoi(n); err == nil {
		r.NodeCount = count
	} else {
		r.Nodes = splitNames(n)
	}
	if u, ok := o["U"]; ok {
		r.Users = splitNames(u)
	}
	if v, ok := o["mem"]; ok {
		if r.Req.MemBytes, err = resv.ParseMem(v); err != nil {
			return c.badValue(err)
		}
	}
	for name, dst := range map[string]*int{"ncpu": &r.Req.NCPU, "sn": &r.Req.Slots} {
		if v, ok := o[name]; ok {
			if *dst, err = strconv.Atoi(v); err != nil || *dst < 1 {
				return c.badValue(fmt.Errorf("bad -%s %q: want a positive number", name, v))
			}
		}
	}
	r.Req.Arch, r.Req.OS = o["arch"], o["os"]
	if p, ok := o["partition"]; ok {
		if !onePartition(p) {
			return c.usageError("-partition takes one partition name")
		}
		r.Partition = p
	}
	if v, ok := o["l"]; ok {
		if r.Req.Attrs, r.Req.Props, err = resv.ParseL(v); err != nil {
			return c.badValue(err)
		}
	}
	if err := r.Validate(env.Now); err != nil {
		return c.badValue(err)
	}
	conn, code := c.connect()
	if conn == nil {
		return code
	}
	defer conn.Close()
	_, transaction := o["T"]
	id, err := conn.ResvSubmit(toPBS(r.SubmitAttrs()), transaction)
	if err != nil {
		return c.failed("reservation refused", err)
	}
	if _, ok := o["x"]; ok {
		writeXML(env.Stdout, xmlResult{Command: "reserve", ID: id, Transaction: transaction})
	} else {
		fmt.Fprintln(env.Stdout, id)
	}
	if _, ok := o["p"]; ok {
		objs, err := conn.ResvStatus(batchreq.ResvStatus{ID: id, Expired: -1})
		if err != nil {
			return c.failed("status of "+id, err)
		}
		return printStatus(c, objs, statusFormat{nodes: true, xml: has(o, "x")})
	}
	return ExitOK
}

// onePartition reports whether p, the value of -partition, is one
// partition name.
func onePartition(p string) bool { return p != "" && !strings.ContainsAny(p, ", \t") }

func has(o map[string]string, name string) bool { _, ok := o[name]; return ok }

// window reads -s, -e and -D into start and end; with required, -s and
// one of -e and -D must be given. -e and -D together are refused.
func (c *cmd) window(o map[string]string, start, end *time.Time, required bool) int {
	var err error
	s, hasS := o["s"]
	e, hasE := o["e"]
	d, hasD := o["D"]
	switch {
	case hasE && hasD:
		return c.usageError("give -e endTime or -D duration, not both")
	case required && !hasS:
		return c.usageError("-s startTime is required")
	case required && !hasE && !hasD:
		return c.usageError("-e endTime or -D duration is required")
	}
	if hasS {
		if *start, err = resv.ParseTime(s, c.Now); err != nil {
			return c.badValue(err)
		}
	}
	if hasE {
		if *end, err = resv.ParseTime(e, c.Now); err != nil {
			return c.badValue(err)
		}
	}
	if hasD {
		dur, err := resv.ParseDuration(d)
		if err != nil {
			return c.badValue(err)
		}
		if start.IsZero() {
			return c.usageError("-D needs the start time")
		}
		*end = start.Add(dur)
	}
	return ExitOK
}

// toPBS converts wire attributes to the client library's.
func toPBS(l batchreq.AttrList) []pbs.Attr {
	out := make([]pbs.Attr, len(l))
	for i, a := range l {
		out[i] = pbs.Attr{Name: a.Name, Value: a.Value}
	}
	return out
}

// Commit is plus_commit -r id: it applies the operation waiting on the
// reservation.
func Commit(env *Env, args []string) int { return commitAbort(env, args, "plus_commit", true) }

// Abort is plus_abort -r id: it drops the operation waiting on the
// reservation.
func Abort(env *Env, args []string) int { return commitAbort(env, args, "plus_abort", false) }

func commitAbort(env *Env, args []string, prog string, commit bool) int {
	c := &cmd{Env: env, prog: prog, usage: prog + " -r reservationID"}
	if wantsHelp(args) {
		return c.help()
	}
	o, err := options(args, map[string]optKind{"r": value})
	if err != nil {
		return c.usageError("%v", err)
	}
	id, ok := o["r"]
	if !ok {
		return c.usageError("-r reservationID is required")
	}
	if id, err = normID(id); err != nil {
		return c.badValue(err)
	}
	conn, code := c.connect()
	if conn == nil {
		return code
	}
	defer conn.Close()
	if commit {
		err = conn.ResvCommit(id)
	} else {
		err = conn.ResvAbort(id)
	}
	if err != nil {
		return c.failed(id, err)
	}
	return ExitOK
}

// normID checks a reservation id and writes it as R<n>.
func normID(s string) (string, error) {
	n, err := resv.ParseID(strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	return resv.FormatID(n), nil
}
