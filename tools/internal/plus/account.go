package plus

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gopbs/resv"
)

const accountUsage = "plus_account [-s startTime] [-e endTime] [-d days] [-f logfile[,logfile...]] [-o [owner]] [-n [nodes]] [-l] [-S]"

// Account is plus_account: it reads the reservation records of the
// accounting files (resv.Record) and reports the reservations whose
// window overlaps the report period, their reserved node-hours (clipped
// to the period, up to a cancellation) and the node-hours their jobs
// used (from the end records).
//
// The period is -s to -e; -d days is the days before -e (default now);
// without any, the last 7 days. Files are -f's, else the daily files of
// <home>/server_priv/accounting from 31 days before the period to its
// end. Output: one line per reservation and a total line; -l adds the
// state, users, assigned nodes and jobs; -o groups by owner (only that
// owner's if one is named), -n by assigned node (only the named nodes);
// -S prints the total line only. Malformed reservation lines are
// reported on standard error with their file and line and skipped.
func Account(env *Env, args []string) int {
	c := &cmd{Env: env, prog: "plus_account", usage: accountUsage}
	if wantsHelp(args) {
		return c.help()
	}
	o, err := options(args, map[string]optKind{"s": value, "e": value, "d": value, "f": value,
		"o": optValue, "n": optValue, "l": flag, "S": flag})
	if err != nil {
		return c.usageError("%v", err)
	}
	if has(o, "o") && has(o, "n") {
		return c.usageError("group by owner (-o) or by node (-n), not both")
	}
	end := env.Now
	if v, ok := o["e"]; ok {
		if end, err = resv.ParseTime(v, env.Now); err != nil {
			return c.badValue(err)
		}
	}
	start := end.AddDate(0, 0, -7)
	if v, ok := o["d"]; ok {
		days, err := strconv.Atoi(v)
		if err != nil || days < 1 || days > 36500 {
			return c.badValue(fmt.Errorf("bad -d %q: want a number of days", v))
		}
		if has(o, "s") {
			return c.usageError("give -s startTime or -d days, not both")
		}
		start = end.AddDate(0, 0, -days)
	}
	if v, ok := o["s"]; ok {
		if start, err = resv.ParseTime(v, env.Now); err != nil {
			return c.badValue(err)
		}
	}
	if !end.After(start) {
		return c.badValue(fmt.Errorf("end %s is not after start %s", end.Format(resv.TimeLayout), start.Format(resv.TimeLayout)))
	}
	var files []string
	if v, ok := o["f"]; ok {
		files = strings.Split(v, ",")
	} else {
		files = dailyFiles(filepath.Join(env.Home, "server_priv", "accounting"), start.AddDate(0, 0, -31), end, env.loc())
	}
	var recs []*resv.Record
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", c.prog, err)
			return ExitFailed
		}
		got, bad, err := resv.ReadRecords(fh, f, env.loc())
		fh.Close()
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", c.prog, err)
			return ExitFailed
		}
		for _, b := range bad {
			fmt.Fprintf(env.Stderr, "%s: %v (line skipped)\n", c.prog, b)
		}
		recs = append(recs, got...)
	}
	list := fold(recs, start, end)
	owner, nodes := o["o"], splitNames(o["n"])
	var kept []*usage
	for _, u := range list {
		if owner != "" && u.owner != owner {
			continue
		}
		if len(nodes) > 0 && !anyOf(u.nodes, nodes) {
			continue
		}
		kept = append(kept, u)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	if !has(o, "S") {
		switch {
		case has(o, "o"):
			groups(tw, "Owner", kept, func(u *usage) []string { return []string{u.owner} }, nil, 1)
		case has(o, "n"):
			groups(tw, "Node", kept, func(u *usage) []string { return u.nodes }, nodes, 0)
		default:
			listing(tw, kept, has(o, "l"), env.loc())
		}
	}
	var res, used float64
	for _, u := range kept {
		res += u.reserved
		used += u.used
	}
	fmt.Fprintf(tw, "Total: %d reservations, %.2f node-hours reserved, %.2f node-hours used, from %s to %s\n",
		len(kept), res, used, formatTime(start, env.loc()), formatTime(end, env.loc()))
	return ExitOK
}

// dailyFiles lists the existing accounting files YYYYMMDD of the days
// from from to to.
func dailyFiles(dir string, from, to time.Time, loc *time.Location) []string {
	var out []string
	day := time.Date(from.In(loc).Year(), from.In(loc).Month(), from.In(loc).Day(), 0, 0, 0, 0, loc)
	for ; !day.After(to); day = day.AddDate(0, 0, 1) {
		p := filepath.Join(dir, day.Format("20060102"))
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func anyOf(have, want []string) bool {
	for _, h := range have {
		for _, w := range want {
			if h == w {
				return true
			}
		}
	}
	return false
}

// usage is what the records say of one reservation.
type usage struct {
	id, owner, state string
	users, nodes     []string
	start, end       time.Time // the window, cut at a cancellation
	planned          time.Time // the planned end
	nodect           int
	reserved, used   float64 // node-hours
	jobs             int
}

// fold merges the records of each reservation and keeps those whose
// window overlaps [from, to), sorted by start and id.
func fold(recs []*resv.Record, from, to time.Time) []*usage {
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Time.Before(recs[j].Time) })
	byID := map[string]*usage{}
	var order []string
	for _, r := range recs {
		u := byID[r.ID]
		if u == nil {
			u = &usage{id: r.ID}
			byID[r.ID] = u
			order = append(order, r.ID)
		}
		u.owner, u.users, u.start, u.end, u.planned, u.nodect = r.Owner, r.Users, r.Start, r.End, r.End, r.NodeCount
		if len(r.Nodes) > 0 {
			u.nodes = r.Nodes
		}
		switch r.Type {
		case resv.RecConfirmed, resv.RecModified:
			u.state = resv.Confirmed.String()
		case resv.RecBegin:
			u.state = resv.Running.String()
		case resv.RecFinished:
			u.state = resv.Done.String()
			u.used = float64(r.Usage.JobSeconds) / 3600
			u.jobs = r.Usage.Jobs
		case resv.RecCancelled, resv.RecDestroyed:
			u.state = resv.Cancelled.String()
			if r.Type == resv.RecDestroyed {
				u.state = resv.Destroyed.String()
			}
			if r.Time.Before(u.end) {
				u.end = r.Time
			}
		}
	}
	var out []*usage
	for _, id := range order {
		u := byID[id]
		if !u.start.Before(to) || !u.planned.After(from) {
			continue
		}
		s, e := u.start, u.end
		if s.Before(from) {
			s = from
		}
		if e.After(to) {
			e = to
		}
		if e.After(s) {
			u.reserved = float64(u.nodect) * e.Sub(s).Hours()
		}
		out = append(out, u)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

func listing(tw *tabwriter.Writer, list []*usage, long bool, loc *time.Location) {
	head := "ID\tOwner\tStart\tEnd\tNodes\tReserved\tUsed"
	if long {
		head += "\tState\tUsers\tAssigned\tJobs"
	}
	fmt.Fprintln(tw, head)
	for _, u := range list {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%.2f\t%.2f", u.id, u.owner, formatTime(u.start, loc), formatTime(u.planned, loc),
			u.nodect, u.reserved, u.used)
		if long {
			line += fmt.Sprintf("\t%s\t%s\t%s\t%d", u.state, orDash(strings.Join(u.users, ",")), orDash(strings.Join(u.nodes, "+")), u.jobs)
		}
		fmt.Fprintln(tw, line)
	}
}

// groups prints one line per key (owner or node) with the number of
// reservations and their node-hours; a node's share of a reservation is
// its own hours (share 0: reserved / nodes). only, if set, limits the keys.
func groups(tw *tabwriter.Writer, title string, list []*usage, keys func(*usage) []string, only []string, share int) {
	type sum struct {
		n              int
		reserved, used float64
	}
	sums := map[string]*sum{}
	for _, u := range list {
		ks := keys(u)
		for _, k := range ks {
			if len(only) > 0 && !anyOf([]string{k}, only) {
				continue
			}
			s := sums[k]
			if s == nil {
				s = &sum{}
				sums[k] = s
			}
			s.n++
			div := float64(share)
			if share == 0 {
				div = float64(len(ks))
			}
			s.reserved += u.reserved / div
			s.used += u.used / div
		}
	}
	names := make([]string, 0, len(sums))
	for k := range sums {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintf(tw, "%s\tReservations\tReserved\tUsed\n", title)
	for _, k := range names {
		s := sums[k]
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\n", k, s.n, s.reserved, s.used)
	}
}
