// Command tracejob collects every log line about one job from the
// server, MOM and scheduler logs and the accounting file of the last days
// and prints them in time order.
//
// Usage:
//
//	tracejob [-a] [-l] [-m] [-s] [-q] [-v] [-z] [-c count] [-f filter]...
//	         [-n days] [-p pbs_home] [-w width] jobid
//
// Files read, for each of the last days (today and the days before it,
// named YYYYMMDD, spec 13 §1): pbs_home/server_logs/, mom_logs/,
// sched_logs/ and server_priv/accounting/. A log line (format
// "MM/DD/YYYY HH:MM:SS;event;daemon;class;object;message") belongs to the
// job when its object is the job id or its message names the job id as a
// word (e.g. MOM's "job 11.vm started, pid = …"); an accounting record
// ("MM/DD/YYYY HH:MM:SS;type;id;message") when its id is the job's. A job
// id without a server part is completed with the server name of
// pbs_home/server_name when there is one; otherwise it matches any
// "<id>.<server>".
//
// The spec shows no tracejob output; the layout is the one TORQUE
// administrators know from its tracejob: a header "Job: <id>", an empty
// line, then one entry per line — the date and time, a column naming the
// source (S server, M MOM, L scheduler, A accounting) and the message —
// (an accounting entry shows its record type letter, four spaces and the
// record), with messages longer than the width wrapped onto continuation lines
// indented to the message column, and the entries of all sources merged in
// time order (stable: lines of the same second keep the order server,
// MOM, scheduler, accounting and their order within the file).
//
// Options:
//
//	-a, -l, -m, -s  skip the accounting file, scheduler, MOM or server logs
//	-n days         how many days to look back, today included (default 1)
//	-p pbs_home     PBS home (default $PBS_HOME or the compiled-in home)
//	-f filter       leave out lines of an event class: error, system, admin,
//	                job, job_usage, security, sched, debug, debug2 or a
//	                (hex "0x…" or decimal) event mask; may be repeated
//	-c count        leave out messages that occur more than count times
//	                (repeated polling lines)
//	-z              leave out a line whose message repeats the previous one
//	                of the same source
//	-w width        output width (default $COLUMNS, else 80; 0 = no wrap)
//	-q              no messages about missing files or absent lines
//	-v              name every file read or missing on stderr
//
// Exit status: 0 when lines were found, 1 when none was (or no file could
// be read; "tracejob: no log lines for <id>" on stderr unless -q), 2 for
// usage errors (unknown option, missing argument or job id, malformed job
// id, several job ids, bad number).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

const usageText = `usage: tracejob [-a] [-l] [-m] [-s] [-q] [-v] [-z] [-c count] [-f filter] [-n days] [-p pbs_home] [-w width] jobid
`

// Log sources, in the order lines of the same second are printed.
type source struct {
	letter string
	dir    string // relative to PBS_HOME
	acct   bool   // accounting format
	skip   byte   // option letter that skips it
}

var sources = []source{
	{"S", "server_logs", false, 's'},
	{"M", "mom_logs", false, 'm'},
	{"L", "sched_logs", false, 'l'},
	{"A", filepath.Join("server_priv", "accounting"), true, 'a'},
}

// eventClasses are the names -f accepts (PBSEVENT_* bits).
var eventClasses = map[string]int{
	"error": 0x001, "system": 0x002, "admin": 0x004, "job": 0x008, "job_usage": 0x010,
	"security": 0x020, "sched": 0x040, "debug": 0x080, "debug2": 0x100,
}

// options is a parsed command line.
type options struct {
	skip    map[byte]bool
	days    int
	home    string
	filter  int
	count   int // 0 = no limit
	dedup   bool
	width   int
	quiet   bool
	verbose bool
	jobID   string
}

// entry is one log line about the job.
type entry struct {
	when   time.Time
	date   string // as written
	source int
	seq    int
	msg    string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, time.Now()))
}

func run(args []string, stdout, stderr io.Writer, now time.Time) int {
	o, err := parseArgs(args, stderr)
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintf(stderr, "tracejob: %v\n", err)
		}
		io.WriteString(stderr, usageText)
		return 2
	}
	id := qualify(o.jobID, o.home)
	entries, read := o.collect(id, now, stderr)
	if len(entries) == 0 {
		if !o.quiet {
			if read == 0 {
				fmt.Fprintf(stderr, "tracejob: no log files found under %s\n", o.home)
			} else {
				fmt.Fprintf(stderr, "tracejob: no log lines for %s\n", id)
			}
		}
		return 1
	}
	o.print(stdout, id, entries)
	return 0
}

var errUsage = errors.New("usage")

func parseArgs(args []string, stderr io.Writer) (*options, error) {
	opts, operands, bad := cli.Getopt(args, "ac:f:lmn:p:qsvw:z", "tracejob", stderr)
	if bad || len(operands) != 1 {
		return nil, errUsage
	}
	o := &options{skip: map[byte]bool{}, days: 1, home: pbs.Home(), width: 80}
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		o.width = c
	}
	number := func(opt byte, s string, min int) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < min {
			return 0, fmt.Errorf("-%c needs a number of at least %d, not %q", opt, min, s)
		}
		return n, nil
	}
	var err error
	for _, op := range opts {
		switch op.C {
		case 'a', 'l', 'm', 's':
			o.skip[op.C] = true
		case 'c':
			if o.count, err = number('c', op.Arg, 1); err != nil {
				return nil, err
			}
		case 'f':
			mask, ok := eventClasses[strings.ToLower(op.Arg)]
			if !ok {
				v, err := strconv.ParseInt(op.Arg, 0, 32)
				if err != nil || v <= 0 {
					return nil, fmt.Errorf("unknown filter %q", op.Arg)
				}
				mask = int(v)
			}
			o.filter |= mask
		case 'n':
			if o.days, err = number('n', op.Arg, 1); err != nil {
				return nil, err
			}
		case 'p':
			o.home = op.Arg
		case 'q':
			o.quiet = true
		case 'v':
			o.verbose = true
		case 'w':
			if o.width, err = number('w', op.Arg, 0); err != nil {
				return nil, err
			}
		case 'z':
			o.dedup = true
		}
	}
	if _, err := pbs.ParseJobID(operands[0]); err != nil || strings.Contains(operands[0], "@") {
		return nil, fmt.Errorf("illegally formed job identifier: %s", operands[0])
	}
	o.jobID = operands[0]
	return o, nil
}

// qualify completes a job id without server part with the default
// server's name (pbs_home/server_name), when known.
func qualify(id, home string) string {
	if strings.Contains(id, ".") {
		return id
	}
	name, _, _ := strings.Cut(pbs.ServerNameFile(home), ",")
	name, _, _ = strings.Cut(strings.TrimSpace(name), ":")
	if name == "" {
		return id
	}
	return id + "." + name
}

// collect reads every file of the selected sources for the last days.
func (o *options) collect(id string, now time.Time, stderr io.Writer) ([]entry, int) {
	var entries []entry
	read := 0
	for si, src := range sources {
		if o.skip[src.skip] {
			continue
		}
		for d := o.days - 1; d >= 0; d-- {
			day := now.AddDate(0, 0, -d)
			path := filepath.Join(o.home, src.dir, day.Format("20060102"))
			f, err := os.Open(path)
			if err != nil {
				if o.verbose {
					fmt.Fprintf(stderr, "tracejob: %s: %v\n", path, err)
				}
				continue
			}
			read++
			if o.verbose {
				fmt.Fprintf(stderr, "tracejob: reading %s\n", path)
			}
			entries = o.scan(f, src.acct, si, id, entries)
			f.Close()
		}
	}
	sort.SliceStable(entries, func(a, b int) bool {
		if !entries[a].when.Equal(entries[b].when) {
			return entries[a].when.Before(entries[b].when)
		}
		return entries[a].source < entries[b].source
	})
	entries = o.limit(entries)
	return entries, read
}

// scan appends the lines of one file that concern the job.
func (o *options) scan(r io.Reader, acct bool, si int, id string, entries []entry) []entry {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		date, rest, ok := strings.Cut(line, ";")
		if !ok {
			continue
		}
		when, err := time.ParseInLocation("01/02/2006 15:04:05", date, time.Local)
		if err != nil {
			continue
		}
		var msg string
		if acct {
			typ, rest, ok := strings.Cut(rest, ";")
			if !ok {
				continue
			}
			obj, text, _ := strings.Cut(rest, ";")
			if !sameJob(obj, id) {
				continue
			}
			msg = typ + "    " + text
		} else {
			f := strings.SplitN(rest, ";", 5)
			if len(f) != 5 {
				continue
			}
			obj, text := f[3], f[4]
			if !sameJob(obj, id) && !mentions(text, id) {
				continue
			}
			if o.filter != 0 {
				if ev, err := strconv.ParseInt(f[0], 16, 32); err == nil && int(ev)&o.filter != 0 {
					continue
				}
			}
			msg = text
		}
		entries = append(entries, entry{when: when, date: date, source: si, seq: len(entries), msg: msg})
	}
	return entries
}

// sameJob reports whether a log object names the job (an id without
// server part matches any server).
func sameJob(obj, id string) bool {
	if obj == id {
		return true
	}
	return !strings.Contains(id, ".") && strings.HasPrefix(obj, id+".")
}

// mentions reports whether text contains the job id as a word; an id
// without server part must be followed by ".<server>".
func mentions(text, id string) bool {
	full := strings.Contains(id, ".")
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], id)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(id)
		i = start + 1
		if start > 0 && idChar(text[start-1]) {
			continue
		}
		if full {
			// A sentence may end right after the id ("… 11.vm.").
			if end == len(text) || !idChar(text[end]) || text[end] == '.' && (end+1 == len(text) || !idChar(text[end+1])) {
				return true
			}
			continue
		}
		if end+1 < len(text) && text[end] == '.' && idChar(text[end+1]) && text[end+1] != '.' {
			return true
		}
	}
	return false
}

func idChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-' || c == '[' || c == ']' || c == '_'
}

// limit applies -c (drop messages occurring more than count times) and -z
// (drop a message repeating the previous one of its source).
func (o *options) limit(entries []entry) []entry {
	if o.count > 0 {
		seen := map[string]int{}
		for _, e := range entries {
			seen[e.msg]++
		}
		kept := entries[:0]
		for _, e := range entries {
			if seen[e.msg] <= o.count {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	if o.dedup {
		last := map[int]string{}
		kept := entries[:0]
		for _, e := range entries {
			if m, ok := last[e.source]; ok && m == e.msg {
				continue
			}
			last[e.source] = e.msg
			kept = append(kept, e)
		}
		entries = kept
	}
	return entries
}

// print writes the report.
func (o *options) print(w io.Writer, id string, entries []entry) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Job: %s\n\n", id)
	const indent = 19 + 2 + 1 + 2 // date, gap, source letter, gap
	for _, e := range entries {
		prefix := fmt.Sprintf("%-19s  %s  ", e.date, sources[e.source].letter)
		lines := wrap(e.msg, o.width-indent)
		for i, l := range lines {
			if i == 0 {
				b.WriteString(prefix)
			} else {
				b.WriteString(strings.Repeat(" ", indent))
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	w.Write(b.Bytes())
}

// wrap splits msg into lines of at most width bytes, at spaces where
// possible; width < 20 (or 0) leaves the message whole.
func wrap(msg string, width int) []string {
	if width < 20 || len(msg) <= width {
		return []string{msg}
	}
	var lines []string
	for len(msg) > width {
		cut := strings.LastIndexByte(msg[:width+1], ' ')
		if cut <= 0 {
			cut = width
		}
		lines = append(lines, strings.TrimRight(msg[:cut], " "))
		msg = strings.TrimLeft(msg[cut:], " ")
	}
	if msg != "" {
		lines = append(lines, msg)
	}
	return lines
}
