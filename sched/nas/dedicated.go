package nas

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// Period is one scheduled dedicated time.
type Period struct {
	Start, End time.Time
	Comment    string
}

// ParseSchedule reads the output of the dedicated time command in the
// seed's format and returns the periods of system, in chronological
// order:
//
//	PIGLET       07/14/1998 16:00-19:00 07/14/1998  Install latest compiler.
//	SLICKY       08/20/1998 09:00-09:00 08/21/1998  All day outage for power
//	                                                supply and CPU board swap.
//
// Each line is the system name, the start date, "start-end" times, the
// end date and a comment; lines starting with a blank continue the
// previous comment. The system name is compared without regard to case.
// Lines that do not have this form are returned as errors (and skipped).
func ParseSchedule(out []byte, system string, loc *time.Location) ([]Period, []error) {
	var ps []Period
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	last := -1
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if last >= 0 {
				ps[last].Comment += " " + strings.TrimSpace(line)
			}
			continue
		}
		last = -1
		f := strings.Fields(line)
		if len(f) < 4 {
			errs = append(errs, fmt.Errorf("dedicated time line %d: too few fields", n))
			continue
		}
		if !strings.EqualFold(f[0], system) {
			continue
		}
		startT, endT, ok := strings.Cut(f[2], "-")
		if !ok {
			errs = append(errs, fmt.Errorf("dedicated time line %d: %q is not start-end", n, f[2]))
			continue
		}
		start, err1 := time.ParseInLocation("01/02/2006 15:04", f[1]+" "+startT, loc)
		end, err2 := time.ParseInLocation("01/02/2006 15:04", f[3]+" "+endT, loc)
		if err1 != nil || err2 != nil || !end.After(start) {
			errs = append(errs, fmt.Errorf("dedicated time line %d: bad dates or times", n))
			continue
		}
		ps = append(ps, Period{Start: start, End: end, Comment: strings.Join(f[4:], " ")})
		last = len(ps) - 1
	}
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].Start.Before(ps[b].Start) })
	return ps, errs
}

// Runner runs the dedicated time command with its one argument and
// returns its standard output.
type Runner func(ctx context.Context, command, arg string) ([]byte, error)

// ExecRunner runs the command as a program (a binary or a script).
func ExecRunner(ctx context.Context, command, arg string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, command, arg).Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w", command, arg, err)
	}
	return out, nil
}

// commandTimeout bounds one run of the dedicated time command.
const commandTimeout = 30 * time.Second

// Dedicated is the dedicated time source: the command of
// DEDICATED_TIME_COMMAND, asked at most once per cache period.
type Dedicated struct {
	Command  string
	System   string
	CacheFor time.Duration
	Location *time.Location
	Run      Runner

	fetched bool
	at      time.Time
	periods []Period
}

// Periods returns the dedicated times known at now, running the command
// when there is no answer younger than CacheFor. When the command fails
// the previous answer is kept (and the failure returned for the log).
func (d *Dedicated) Periods(now time.Time) ([]Period, []error) {
	if d.fetched && d.CacheFor > 0 && now.Sub(d.at) < d.CacheFor && !now.Before(d.at) {
		return d.periods, nil
	}
	run := d.Run
	if run == nil {
		run = ExecRunner
	}
	loc := d.Location
	if loc == nil {
		loc = time.Local
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	out, err := run(ctx, d.Command, d.System)
	if err != nil {
		return d.periods, []error{err}
	}
	ps, errs := ParseSchedule(out, d.System, loc)
	d.fetched, d.at, d.periods = true, now, ps
	return ps, errs
}

// dedicatedAt returns the period containing t, and the first period
// starting after t.
func dedicatedAt(ps []Period, t time.Time) (cur, next *Period) {
	for i := range ps {
		p := &ps[i]
		if !t.Before(p.Start) && t.Before(p.End) {
			if cur == nil {
				cur = p
			}
		} else if p.Start.After(t) && next == nil {
			next = p
		}
	}
	return cur, next
}
