package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"gopbs/pbs"
)

// timeAttrs are the job attributes -f prints with ctime(3).
var timeAttrs = map[string]bool{
	"ctime": true, "etime": true, "mtime": true, "qtime": true,
	"start_time": true, "comp_time": true, "checkpoint_time": true,
	"Execution_Time": true,
}

// ctime formats an epoch like C's ctime(3), newline included.
func ctime(v string) string {
	sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return v + "\n"
	}
	return time.Unix(sec, 0).Format("Mon Jan _2 15:04:05 2006") + "\n"
}

// printAttr prints one "-f" attribute line, folding the value as TORQUE
// does (spec 05 §3.3): elements between commas that do not fit before
// column width start a new TAB-indented line, and over-long elements are
// broken character by character.
func printAttr(w io.Writer, a pbs.Attr, width int, convertTimes bool) {
	var b strings.Builder
	b.WriteString("    ")
	b.WriteString(a.FullName())
	b.WriteString(" = ")
	if convertTimes && a.Resource == "" && timeAttrs[a.Name] {
		b.WriteString(ctime(a.Value))
		io.WriteString(w, b.String())
		return
	}
	col := len(a.Name) + 7
	if a.Resource != "" {
		col += len(a.Resource) + 1
	}
	first := true
	for _, elem := range strings.Split(a.Value, ",") {
		if elem == "" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		if len(elem)+col < width {
			b.WriteString(elem)
			col += len(elem)
		} else {
			if !first {
				b.WriteString("\n\t")
				col = 9
			}
			for i := 0; i < len(elem); i++ {
				b.WriteByte(elem[i])
				col++
				if col > width {
					b.WriteString("\n\t")
					col = 8
				}
			}
		}
		first = false
	}
	b.WriteByte('\n')
	io.WriteString(w, b.String())
}

// printXML prints the -x document: one line, one element per object.
func printXML(w io.Writer, objTag, idTag string, list []pbs.Status) {
	if len(list) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("<Data>")
	for _, st := range list {
		fmt.Fprintf(&b, "<%s><%s>%s</%s>", objTag, idTag, xmlEscape(st.Name), idTag)
		for i := 0; i < len(st.Attrs); i++ {
			a := st.Attrs[i]
			if a.Resource == "" {
				fmt.Fprintf(&b, "<%s>%s</%s>", a.Name, xmlEscape(a.Value), a.Name)
				continue
			}
			fmt.Fprintf(&b, "<%s>", a.Name)
			for ; i < len(st.Attrs) && st.Attrs[i].Name == a.Name && st.Attrs[i].Resource != ""; i++ {
				r := st.Attrs[i]
				fmt.Fprintf(&b, "<%s>%s</%s>", r.Resource, xmlEscape(r.Value), r.Resource)
			}
			i--
			fmt.Fprintf(&b, "</%s>", a.Name)
		}
		fmt.Fprintf(&b, "</%s>", objTag)
	}
	b.WriteString("</Data>\n")
	io.WriteString(w, b.String())
}

func xmlEscape(s string) string {
	if !strings.ContainsAny(s, "<>&") {
		return s
	}
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

func get(st *pbs.Status, name, res string) string {
	v, _ := st.Get(name, res)
	return v
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// printJobLine prints one line of the default job display.
func printJobLine(w io.Writer, st *pbs.Status, long bool) {
	id := st.Name
	keep := 1
	if long {
		keep = 3
	}
	if i := strings.IndexByte(id, '.'); i >= 0 {
		rest := id[i+1:]
		parts := strings.SplitN(rest, ".", keep+1)
		if len(parts) > keep {
			id = id[:i+1] + strings.Join(parts[:keep], ".")
		}
	}
	if len(id) > 23 {
		id = cut(id, 29)
	}
	name := get(st, "Job_Name", "")
	if len(name) > 16 {
		tail := name[len(name)-13:]
		if k := strings.IndexByte(tail, '/'); k >= 0 {
			tail = tail[k:]
		}
		name = "..." + tail
	}
	user, _, _ := strings.Cut(get(st, "Job_Owner", ""), "@")
	cput, ok := st.Get("resources_used", "cput")
	if !ok {
		cput = "0"
	}
	state := get(st, "job_state", "")
	if len(state) > 1 {
		state = state[:1]
	}
	queue, _, _ := strings.Cut(get(st, "queue", ""), "@")
	fmt.Fprintf(w, "%-26s %-16s %-15s %8s %1s %-15s\n", id, name, cut(user, 15), cut(cput, 8), state, cut(queue, 15))
}

// printf-style "%-W.Ps" and "%W.Ps".
func left(s string, w, p int) string  { return fmt.Sprintf("%-*s", w, cut(s, p)) }
func right(s string, w, p int) string { return fmt.Sprintf("%*s", w, cut(s, p)) }

const absent = " -- "

// resourceLine is the job line of "qstat -R": the columns of the
// alternate display without Jobname and SessID, then the BIG, FAST and
// PFS resources (spec 05 §3.4).
const resourceLine = "%-23.22s %-11.11s %-8.8s %5.5s %6.6s %6.6s %9.9s %1.1s %9.9s %5.5s %5.5s %5.5s"

// resourceHeader is the header of "qstat -R": labels right-aligned over
// the columns of resourceLine, as the alternate display's header does.
var resourceHeader = func() string {
	widths := []int{-23, -11, -8, 5, 6, 6, 9, 1, 9, 5, 5, 5}
	rows := [][]string{
		{"", "", "", "", "", "Req'd", "Req'd", "", "Elap", "", "", ""},
		{"Job ID", "Username", "Queue", "NDS", "TSK", "Memory", "Time", "S", "Time", "BIG", "FAST", "PFS"},
	}
	var b strings.Builder
	for _, row := range rows {
		var line []string
		for i, label := range row {
			line = append(line, fmt.Sprintf("%*s", widths[i], label))
		}
		b.WriteString(strings.TrimRight(strings.Join(line, " "), " ") + "\n")
	}
	var dashes []string
	for _, w := range widths {
		dashes = append(dashes, strings.Repeat("-", max(w, -w)))
	}
	b.WriteString(strings.Join(dashes, " ") + "\n")
	return b.String()
}()

func printAltHeader(w io.Writer, header string, o options) {
	fmt.Fprintf(w, "\n%s\n", header)
	if o.resources {
		io.WriteString(w, resourceHeader)
		return
	}
	fmt.Fprintln(w, "                                                                                  Req'd    Req'd       Elap")
	fmt.Fprintln(w, "Job ID                  Username    Queue    Jobname          SessID  NDS   TSK   Memory   Time    S   Time")
	fmt.Fprintln(w, "----------------------- ----------- -------- ---------------- ------ ----- ------ ------ --------- - ---------")
}

func orAbsent(v string, ok bool) string {
	if !ok || v == "" {
		return absent
	}
	return v
}

// hms parses [[HH:]MM:]SS into seconds.
func hms(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var total int64
	for _, p := range strings.Split(s, ":") {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return 0, false
		}
		total = total*60 + v
	}
	return total, true
}

func fmtHMS(sec int64) string {
	if sec < 0 {
		sec = 0
	}
	return fmt.Sprintf("%02d:%02d:%02d", sec/3600, (sec/60)%60, sec%60)
}

// memory converts a size for the -M (megawords) and -G (gigabytes) forms.
func memory(v string, o options) string {
	if !o.memMW && !o.memGB {
		return v
	}
	b, ok := sizeBytes(v)
	if !ok {
		return v
	}
	if o.memGB {
		const gb = 1 << 30
		return strconv.FormatInt((b+gb-1)/gb, 10) + "gb"
	}
	const mw = 8 << 20
	return strconv.FormatInt((b+mw-1)/mw, 10) + "mw"
}

func sizeBytes(v string) (int64, bool) {
	s := strings.ToLower(v)
	mult := int64(1)
	word := false
	if strings.HasSuffix(s, "b") {
		s = s[:len(s)-1]
	} else if strings.HasSuffix(s, "w") {
		s, word = s[:len(s)-1], true
	}
	if len(s) > 0 {
		switch s[len(s)-1] {
		case 'k':
			mult, s = 1<<10, s[:len(s)-1]
		case 'm':
			mult, s = 1<<20, s[:len(s)-1]
		case 'g':
			mult, s = 1<<30, s[:len(s)-1]
		case 't':
			mult, s = 1<<40, s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if word {
		mult *= 8
	}
	return n * mult, true
}

// tasks computes the TSK column.
func tasks(st *pbs.Status) string {
	t := absent
	if nodes, ok := st.Get("Resource_List", "nodes"); ok {
		if i := strings.IndexByte(nodes, '='); i >= 0 {
			lead := leadingInt(nodes)
			after := leadingInt(nodes[i+1:])
			if lead == 0 {
				lead = 1
			}
			t = strconv.Itoa(lead * after)
		} else {
			t = nodes
		}
	} else if ncpus, ok := st.Get("Resource_List", "ncpus"); ok && ncpus != "0" {
		t = ncpus
	}
	for _, r := range []string{"mppe", "size"} {
		if v, ok := st.Get("Resource_List", r); ok && v != "0" {
			t = v
		}
	}
	return t
}

func leadingInt(s string) int {
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func printAltJob(w io.Writer, st *pbs.Status, o options) {
	user, _, _ := strings.Cut(get(st, "Job_Owner", ""), "@")
	queue := get(st, "queue", "")
	sess := orAbsent(st.Get("session_id", ""))
	nds := orAbsent(st.Get("Resource_List", "nodect"))
	mem := absent
	if v, ok := st.Get("Resource_List", "mem"); ok {
		mem = memory(v, o)
	}
	state := get(st, "job_state", "")
	reqTime, elap := absent, absent
	cput, hasCput := st.Get("Resource_List", "cput")
	wall, hasWall := st.Get("Resource_List", "walltime")
	switch {
	case hasCput:
		reqTime = cput
		elap = orAbsent(st.Get("resources_used", "cput"))
	default:
		if hasWall {
			reqTime = wall
		}
		if state != "Q" && state != "C" {
			req, _ := hms(wall)
			rem, _ := hms(get(st, "Walltime", "Remaining"))
			if _, ok := st.Get("Walltime", "Remaining"); !ok {
				rem = 0
			}
			elap = fmtHMS(req - rem)
		}
	}
	var line string
	if o.resources {
		line = fmt.Sprintf(resourceLine,
			st.Name, user, queue, nds, tasks(st), mem, reqTime, state, elap,
			orAbsent(st.Get("Resource_List", "srfs_big")),
			orAbsent(st.Get("Resource_List", "srfs_fast")),
			orAbsent(st.Get("Resource_List", "piofs")))
	} else {
		line = left(st.Name, 23, 22) + " " + left(user, 11, 11) + " " + left(queue, 8, 8) + " " +
			left(get(st, "Job_Name", ""), 16, 16) + " " + right(sess, 6, 6) + " " + right(nds, 5, 5) + " " +
			right(tasks(st), 6, 6) + " " + right(mem, 6, 6) + " " + right(reqTime, 9, 9) + " " +
			right(state, 1, 1) + " " + right(elap, 9, 9)
	}
	io.WriteString(w, line)
	if o.nodes {
		if !o.oneLine {
			io.WriteString(w, "\n")
		}
		hosts, ok := st.Get("exec_host", "")
		if !ok {
			io.WriteString(w, "   "+absent)
		} else {
			io.WriteString(w, wrapHosts(stripDomains(hosts), o.oneLine))
		}
	}
	if o.comments {
		if !o.oneLine || o.nodes {
			io.WriteString(w, "\n")
		}
		io.WriteString(w, "   "+orAbsent(st.Get("comment", "")))
	}
	io.WriteString(w, "\n")
}

// stripDomains removes every ".domain" part of the hosts of an exec_host
// list, up to the next '+'.
func stripDomains(s string) string {
	var b strings.Builder
	skip := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			skip = false
		case c == '.':
			skip = true
		}
		if !skip {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func wrapHosts(s string, oneLine bool) string {
	if oneLine {
		return "   " + s
	}
	var b strings.Builder
	b.WriteString("   ")
	col := 3
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		col++
		if col >= 77 && s[i] == '+' && i+1 < len(s) {
			b.WriteString("\n   ")
			col = 3
		}
	}
	return b.String()
}
