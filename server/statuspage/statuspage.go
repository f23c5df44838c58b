// Package statuspage serves pbs_server's read-only status page, the
// modern face of TORQUE's xpbs and xpbsmon: the queues with their job
// counts, the jobs (sorted by any column, filtered by user and state) and
// the nodes as a grid coloured by state and load. The page is plain HTML
// and CSS rendered on the server, with no script: sorting and filtering
// are links and a form, and the page reloads itself.
package statuspage

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopbs/server/monitor"
)

//go:embed page.html
var files embed.FS

// Options configure a Handler.
type Options struct {
	// Refresh is how often the page reloads itself (default 15 s).
	Refresh time.Duration
	// MaxJobs bounds the job rows of a page (default 500); the page says
	// how many matching jobs it leaves out.
	MaxJobs int
}

// Handler serves the status page.
type Handler struct {
	src  monitor.Source
	opts Options
	tmpl *template.Template
}

// New returns the page of the server that src describes.
func New(src monitor.Source, opts Options) *Handler {
	if opts.Refresh <= 0 {
		opts.Refresh = 15 * time.Second
	}
	if opts.MaxJobs <= 0 {
		opts.MaxJobs = 500
	}
	t := template.Must(template.New("page.html").Funcs(template.FuncMap{
		"stateName": func(i int) string { return stateNames[i] },
	}).ParseFS(files, "page.html"))
	return &Handler{src: src, opts: opts, tmpl: t}
}

// stateNames name the job states, indexed like monitor.JobStates.
var stateNames = [monitor.NumJobStates]string{"Transit", "Queued", "Held", "Waiting", "Running", "Exiting", "Complete"}

// ServeHTTP renders the page for GET and HEAD requests of "/".
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "read-only page: GET only", http.StatusMethodNotAllowed)
		return
	}
	var buf bytes.Buffer
	if err := h.Render(&buf, ParseQuery(r.URL.Query())); err != nil {
		http.Error(w, "cannot render the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// Columns of the job table, the values of Query.Sort.
var columns = []struct{ key, title string }{
	{"id", "Job ID"}, {"name", "Name"}, {"user", "User"}, {"queue", "Queue"},
	{"state", "State"}, {"nodes", "Nodes"}, {"walltime", "Walltime"}, {"queued", "Queued at"},
}

// Query is what a page shows: the job filter and the job order.
type Query struct {
	Filter monitor.JobFilter
	Sort   string // a column key ("id", "user", ...), "id" when unknown
	Desc   bool   // descending order
}

// ParseQuery reads a Query from the page's URL parameters user, state,
// sort and dir ("desc" for descending). Unknown values are ignored.
func ParseQuery(v url.Values) Query {
	q := Query{Sort: "id"}
	q.Filter.User = strings.TrimSpace(v.Get("user"))
	if st := v.Get("state"); len(st) == 1 && strings.Contains(monitor.JobStates+"S", st) {
		q.Filter.State = st
	}
	for _, c := range columns {
		if c.key == v.Get("sort") {
			q.Sort = c.key
		}
	}
	q.Desc = v.Get("dir") == "desc"
	return q
}

// values returns the URL parameters of q.
func (q Query) values() url.Values {
	v := url.Values{}
	if q.Filter.User != "" {
		v.Set("user", q.Filter.User)
	}
	if q.Filter.State != "" {
		v.Set("state", q.Filter.State)
	}
	if q.Sort != "id" {
		v.Set("sort", q.Sort)
	}
	if q.Desc {
		v.Set("dir", "desc")
	}
	return v
}

// href returns the page's address for q.
func (q Query) href() string {
	if e := q.values().Encode(); e != "" {
		return "?" + e
	}
	return "./"
}

// Render writes the page for q.
func (h *Handler) Render(w io.Writer, q Query) error {
	cl := h.src.Cluster()
	jobs := h.src.Jobs(q.Filter)
	sortJobs(jobs, q.Sort, q.Desc)
	d := pageData{
		Cluster:  cl,
		Query:    q,
		Refresh:  int(h.opts.Refresh.Round(time.Second) / time.Second),
		Matching: len(jobs),
		Taken:    cl.Taken.Format("2006-01-02 15:04:05"),
	}
	if d.Refresh < 1 {
		d.Refresh = 1
	}
	if len(jobs) > h.opts.MaxJobs {
		jobs = jobs[:h.opts.MaxJobs]
	}
	for _, j := range jobs {
		d.Jobs = append(d.Jobs, jobRow{Job: j, Nodes: execHosts(j.ExecHost), QueuedAt: formatTime(j.Queued), StateClass: "st-" + stateClass(j.State)})
	}
	d.Shown = len(d.Jobs)
	for _, c := range columns {
		next := q
		next.Sort, next.Desc = c.key, false
		hd := header{Title: c.title, Key: c.key}
		if q.Sort == c.key {
			next.Desc = !q.Desc
			hd.Arrow = "▲"
			hd.Sorted = "ascending"
			if q.Desc {
				hd.Arrow, hd.Sorted = "▼", "descending"
			}
		}
		hd.Href = next.href()
		d.Headers = append(d.Headers, hd)
	}
	d.StateOptions = append(d.StateOptions, option{Value: "", Label: "any", Selected: q.Filter.State == ""})
	for i, c := range monitor.JobStates + "S" {
		label := "Suspended"
		if i < len(stateNames) {
			label = stateNames[i]
		}
		d.StateOptions = append(d.StateOptions, option{Value: string(c), Label: string(c) + " " + label, Selected: q.Filter.State == string(c)})
	}
	for _, qu := range cl.Queues {
		d.Totals.add(qu.Counts)
	}
	for _, n := range cl.Nodes {
		d.Nodes = append(d.Nodes, nodeTile(n))
		d.NodeVPs += n.NP
		d.NodeVPsUsed += n.Jobs
		if nodeClass(n) == "down" || nodeClass(n) == "offline" {
			d.NodesOut++
		}
	}
	if q.Filter != (monitor.JobFilter{}) {
		clear := q
		clear.Filter = monitor.JobFilter{}
		d.ClearHref = clear.href()
	}
	return h.tmpl.Execute(w, d)
}

// pageData is what page.html renders.
type pageData struct {
	monitor.Cluster
	Query        Query
	Refresh      int // seconds
	Taken        string
	Totals       counts
	Jobs         []jobRow
	Shown        int // rows in Jobs
	Matching     int // jobs passing the filter
	Headers      []header
	StateOptions []option
	Nodes        []tile
	NodeVPs      int
	NodeVPsUsed  int
	NodesOut     int    // nodes down or offline
	ClearHref    string // the unfiltered page, when a filter is set
}

type counts [monitor.NumJobStates]int

func (c *counts) add(o [monitor.NumJobStates]int) {
	for i, n := range o {
		c[i] += n
	}
}

// Total returns the number of jobs counted.
func (c counts) Total() int {
	n := 0
	for _, x := range c {
		n += x
	}
	return n
}

type header struct {
	Title, Key, Href string
	Arrow            string // ▲ or ▼ on the sorted column
	Sorted           string // aria-sort: "ascending", "descending" or ""
}

type option struct {
	Value, Label string
	Selected     bool
}

type jobRow struct {
	monitor.Job
	Nodes      string
	QueuedAt   string
	StateClass string
}

// tile is one node of the grid.
type tile struct {
	Name, State string
	Class       string // CSS class of its state: free, busy, full, down, offline, unknown
	Load        string // one-minute load average as text, "–" when not reported
	LoadClass   string // CSS class of its load per processor: load-low, load-mid, load-high, load-over
	LoadPct     int    // load per processor in percent, at most 100 (the bar's width)
	NP, Jobs    int
	Mem         string // available of physical memory, "" when not reported
	Title       string // tooltip
}

func nodeTile(n monitor.Node) tile {
	t := tile{Name: n.Name, State: n.State(), Class: nodeClass(n), NP: n.NP, Jobs: n.Jobs, Load: "–", LoadClass: "load-none"}
	if n.HasLoad {
		t.Load = strconv.FormatFloat(n.Load, 'f', 2, 64)
		per := n.Load / float64(max(n.NP, 1))
		t.LoadPct = int(min(per, 1) * 100)
		switch {
		case per > 1:
			t.LoadClass = "load-over"
		case per >= 0.75:
			t.LoadClass = "load-high"
		case per >= 0.25:
			t.LoadClass = "load-mid"
		default:
			t.LoadClass = "load-low"
		}
	}
	if n.PhysMem > 0 {
		t.Mem = formatMem(n.AvailMem, n.PhysMem)
	}
	t.Title = fmt.Sprintf("%s: %s, %d of %d processors assigned, load %s", n.Name, t.State, n.Jobs, n.NP, t.Load)
	return t
}

// nodeClass returns the CSS class of a node's state: the most telling of
// its state words.
func nodeClass(n monitor.Node) string {
	has := func(w string) bool { return slices.Contains(n.States, w) }
	switch {
	case has("down"):
		return "down"
	case has("offline"):
		return "offline"
	case has("state-unknown"), has("unknown"):
		return "unknown"
	case has("job-exclusive"), has("busy"), has("reserve"):
		return "full"
	case n.Jobs > 0, has("job-sharing"):
		return "busy"
	default:
		return "free"
	}
}

func stateClass(letter string) string {
	if i := strings.Index(monitor.JobStates, letter); i >= 0 && letter != "" {
		return strings.ToLower(stateNames[i])
	}
	if letter == "S" {
		return "suspended"
	}
	return "other"
}

// execHosts returns the distinct host names of an exec_host value
// ("n1/0+n1/1+n2/0" gives "n1 n2").
func execHosts(v string) string {
	if v == "" {
		return ""
	}
	var hosts []string
	for part := range strings.SplitSeq(v, "+") {
		h, _, _ := strings.Cut(part, "/")
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return strings.Join(hosts, " ")
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("01-02 15:04:05")
}

// formatMem returns "avail of phys UNIT free" in phys's unit, short
// enough for a node's tile ("55 of 64 GiB free").
func formatMem(avail, phys int64) string {
	v, unit := float64(phys), "B"
	div := 1.0
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		if v < 1024 {
			break
		}
		v /= 1024
		div *= 1024
		unit = u
	}
	num := func(x float64) string {
		if x >= 10 || x == float64(int64(x)) {
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return num(float64(avail)/div) + " of " + num(v) + " " + unit + " free"
}

// sortJobs orders jobs by column key; ties keep submission order.
func sortJobs(jobs []monitor.Job, key string, desc bool) {
	var f func(a, b monitor.Job) int
	switch key {
	case "name":
		f = func(a, b monitor.Job) int { return strings.Compare(a.Name, b.Name) }
	case "user":
		f = func(a, b monitor.Job) int { return strings.Compare(a.Owner, b.Owner) }
	case "queue":
		f = func(a, b monitor.Job) int { return strings.Compare(a.Queue, b.Queue) }
	case "state":
		f = func(a, b monitor.Job) int { return strings.Compare(a.State, b.State) }
	case "nodes":
		f = func(a, b monitor.Job) int { return strings.Compare(a.ExecHost, b.ExecHost) }
	case "walltime":
		f = func(a, b monitor.Job) int { return cmp.Compare(seconds(a.Walltime), seconds(b.Walltime)) }
	case "queued":
		f = func(a, b monitor.Job) int { return a.Queued.Compare(b.Queued) }
	default:
		f = func(a, b monitor.Job) int { return compareIDs(a.ID, b.ID) }
	}
	if desc {
		asc := f
		f = func(a, b monitor.Job) int { return asc(b, a) }
	}
	slices.SortStableFunc(jobs, f)
}

// compareIDs orders job ids by their sequence number ("9.s" before
// "10.s", "3[1].s" before "3[2].s"), then as text.
func compareIDs(a, b string) int {
	na, ra := leadingNumber(a)
	nb, rb := leadingNumber(b)
	if c := cmp.Compare(na, nb); c != 0 {
		return c
	}
	if ia, ib := bracketNumber(ra), bracketNumber(rb); ia != ib {
		return cmp.Compare(ia, ib)
	}
	return strings.Compare(a, b)
}

func leadingNumber(s string) (int64, string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	return n, s[i:]
}

func bracketNumber(s string) int64 {
	if !strings.HasPrefix(s, "[") {
		return -1
	}
	n, _ := leadingNumber(s[1:])
	return n
}

// seconds returns a walltime ([[hh:]mm:]ss or seconds) in seconds, -1
// when empty or malformed.
func seconds(v string) int64 {
	if v == "" {
		return -1
	}
	var total int64
	for part := range strings.SplitSeq(v, ":") {
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n < 0 {
			return -1
		}
		total = total*60 + n
	}
	return total
}
