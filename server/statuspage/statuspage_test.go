package statuspage

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopbs/server/monitor"
)

// fakeSource is a monitor.Source with fixed contents.
type fakeSource struct {
	cl   monitor.Cluster
	jobs []monitor.Job
}

func (f *fakeSource) Cluster() monitor.Cluster { return f.cl }

func (f *fakeSource) Jobs(flt monitor.JobFilter) []monitor.Job {
	var out []monitor.Job
	for _, j := range f.jobs {
		if flt.Match(j) {
			out = append(out, j)
		}
	}
	return out
}

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func testSource() *fakeSource {
	return &fakeSource{
		cl: monitor.Cluster{
			Server: "head<1>",
			Taken:  t0,
			Queues: []monitor.Queue{
				{Name: "batch", Type: "Execution", Enabled: true, Started: true, Counts: [7]int{0, 2, 1, 0, 1, 0, 0}},
				{Name: "long", Type: "Execution", Enabled: true, Started: false, Counts: [7]int{0, 1, 0, 0, 0, 0, 1}},
			},
			Nodes: []monitor.Node{
				{Name: "n1", States: []string{"free"}, NP: 4, Load: 0.4, HasLoad: true, PhysMem: 8 << 30, AvailMem: 6 << 30},
				{Name: "n2", States: []string{"job-exclusive"}, NP: 2, Jobs: 2, Load: 3.5, HasLoad: true},
				{Name: "n3", States: []string{"down", "offline"}, NP: 2},
				{Name: "n4", States: []string{"free"}, NP: 4, Jobs: 1, Load: 1.2, HasLoad: true},
			},
		},
		jobs: []monitor.Job{
			{ID: "9.head", Name: "alpha", Owner: "alice", Queue: "batch", State: "Q", Walltime: "01:00:00", Queued: t0.Add(-9 * time.Minute)},
			{ID: "10.head", Name: "<script>x</script>", Owner: "bob", Queue: "batch", State: "R", ExecHost: "n2/0+n2/1", Walltime: "00:10:00", Queued: t0.Add(-5 * time.Minute)},
			{ID: "11.head", Name: "gamma", Owner: "alice", Queue: "batch", State: "H", Queued: t0.Add(-4 * time.Minute)},
			{ID: "12.head", Name: "delta", Owner: "carol", Queue: "long", State: "Q", Walltime: "2:00:00", Queued: t0.Add(-3 * time.Minute)},
			{ID: "13.head", Name: "beta", Owner: "alice", Queue: "long", State: "C", Queued: t0.Add(-2 * time.Minute)},
			{ID: "14.head", Name: "eps", Owner: "bob", Queue: "batch", State: "Q", Queued: t0.Add(-time.Minute)},
		},
	}
}

func render(t *testing.T, h *Handler, rawQuery string) string {
	t.Helper()
	v, err := url.ParseQuery(rawQuery)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := h.Render(&b, ParseQuery(v)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var jobRowRE = regexp.MustCompile(`<tr data-job="([^"]+)">`)

// jobOrder returns the job ids of the page's rows in order.
func jobOrder(page string) []string {
	var ids []string
	for _, m := range jobRowRE.FindAllStringSubmatch(page, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestRenderAll(t *testing.T) {
	page := render(t, New(testSource(), Options{Refresh: 20 * time.Second}), "")
	for _, want := range []string{
		`<meta http-equiv="refresh" content="20">`,
		`<h1>GoPBS · head&lt;1&gt;</h1>`,
		`6 jobs · 1 running · 3 queued · 4 nodes (1 down or offline) · 3 of 12 processors in use`,
		// queue rows: counts T Q H W R E C, then total
		`<tr data-queue="batch"><td>batch</td><td>Execution</td><td>yes</td><td>yes</td><td class="num">0</td><td class="num">2</td><td class="num">1</td><td class="num">0</td><td class="num">1</td><td class="num">0</td><td class="num">0</td><td class="num">4</td></tr>`,
		`<tr data-queue="long"><td>long</td><td>Execution</td><td>yes</td><td><span class="off">no</span></td>`,
		`<tr class="total"><td>all</td><td></td><td></td><td></td><td class="num">0</td><td class="num">3</td><td class="num">1</td><td class="num">0</td><td class="num">1</td><td class="num">0</td><td class="num">1</td><td class="num">6</td></tr>`,
		// nodes: class by state, load bar by load per processor
		`<div class="node free" data-node="n1" data-state="free"`,
		`<div class="info">6 of 8 GiB free</div>`,
		`<div class="bar load-low"><span style="width: 10%"></span></div>`,
		`<div class="node full" data-node="n2" data-state="job-exclusive"`,
		`<div class="bar load-over"><span style="width: 100%"></span></div>`,
		`<div class="node down" data-node="n3" data-state="down,offline"`,
		`<div class="info">0/2 cpus · load –</div>`,
		`<div class="node busy" data-node="n4" data-state="free"`,
		`<div class="bar load-mid"><span style="width: 30%"></span></div>`,
		// job rows, escaped, with exec hosts reduced to host names
		`<tr data-job="10.head"><td>10.head</td><td>&lt;script&gt;x&lt;/script&gt;</td><td>bob</td><td>batch</td><td><span class="pill st-running">R</span></td><td>n2</td><td>00:10:00</td><td>11-27 09:55:00</td></tr>`,
		`<h2>Jobs<small>6</small></h2>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("page contains a script element")
	}
	if got, want := strings.Join(jobOrder(page), " "), "9.head 10.head 11.head 12.head 13.head 14.head"; got != want {
		t.Errorf("default order %s, want %s", got, want)
	}
}

func TestSortAndFilter(t *testing.T) {
	h := New(testSource(), Options{})
	for _, c := range []struct{ query, want string }{
		{"sort=id&dir=desc", "14.head 13.head 12.head 11.head 10.head 9.head"},
		{"sort=name", "10.head 9.head 13.head 12.head 14.head 11.head"},
		{"sort=user", "9.head 11.head 13.head 10.head 14.head 12.head"},
		{"sort=user&dir=desc", "12.head 10.head 14.head 9.head 11.head 13.head"},
		{"sort=state", "13.head 11.head 9.head 12.head 14.head 10.head"},
		{"sort=walltime", "11.head 13.head 14.head 10.head 9.head 12.head"},
		{"sort=queued&dir=desc", "14.head 13.head 12.head 11.head 10.head 9.head"},
		{"user=alice", "9.head 11.head 13.head"},
		{"state=Q", "9.head 12.head 14.head"},
		{"user=bob&state=Q", "14.head"},
		{"user=bob&state=Q&sort=bogus", "14.head"},
		{"state=QQ", "9.head 10.head 11.head 12.head 13.head 14.head"}, // not a state: ignored
		{"user=nobody", ""},
	} {
		page := render(t, h, c.query)
		if got := strings.Join(jobOrder(page), " "); got != c.want {
			t.Errorf("%s: rows %q, want %q", c.query, got, c.want)
		}
	}
}

func TestHeadersAndForm(t *testing.T) {
	h := New(testSource(), Options{})
	page := render(t, h, "user=alice&sort=name")
	for _, want := range []string{
		// the sorted column links to the reverse order, others to theirs ascending, filter kept
		`<th aria-sort="ascending"><a href="?dir=desc&amp;sort=name&amp;user=alice" data-sort="name">Name ▲</a></th>`,
		`<th><a href="?sort=user&amp;user=alice" data-sort="user">User</a></th>`,
		`<th><a href="?user=alice" data-sort="id">Job ID</a></th>`,
		`<input type="text" name="user" value="alice" size="12">`,
		`<input type="hidden" name="sort" value="name">`,
		`<option value="" selected>any</option>`,
		`<a href="?sort=name">show all</a>`,
		`<h2>Jobs<small>3 matching</small></h2>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	page = render(t, h, "state=R&sort=id&dir=desc")
	for _, want := range []string{
		`<option value="R" selected>R Running</option>`,
		`<th aria-sort="descending"><a href="?state=R" data-sort="id">Job ID ▼</a></th>`,
		`<input type="hidden" name="dir" value="desc">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	page = render(t, h, "user=nobody")
	if !strings.Contains(page, `<p class="empty">No jobs match the filter.</p>`) {
		t.Error("no 'no jobs match' note")
	}
}

func TestMaxJobs(t *testing.T) {
	page := render(t, New(testSource(), Options{MaxJobs: 2}), "sort=id&dir=desc")
	if got := strings.Join(jobOrder(page), " "); got != "14.head 13.head" {
		t.Errorf("rows %q", got)
	}
	if !strings.Contains(page, "Showing the first 2 of 6 jobs") {
		t.Error("no note of the jobs left out")
	}
}

func TestEmpty(t *testing.T) {
	page := render(t, New(&fakeSource{cl: monitor.Cluster{Server: "s"}}, Options{}), "")
	for _, want := range []string{"No queues.", "No nodes.", "No jobs.", "0 jobs · 0 running · 0 queued · 0 nodes"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestServeHTTP(t *testing.T) {
	srv := httptest.NewServer(New(testSource(), Options{}))
	defer srv.Close()
	get := func(method, path string) (*http.Response, string) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("GET", "/?state=H")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || strings.Join(jobOrder(body), " ") != "11.head" {
		t.Errorf("GET: %d %q rows %q", resp.StatusCode, resp.Header.Get("Content-Type"), jobOrder(body))
	}
	if resp, _ := get("POST", "/"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
	if resp, _ := get("GET", "/nothing"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nothing: %d", resp.StatusCode)
	}
}

func TestHelpers(t *testing.T) {
	for in, want := range map[string]string{"": "", "n1/0": "n1", "n1/0+n1/1+n2/0": "n1 n2", "a/0+b/0+a/1": "a b"} {
		if got := execHosts(in); got != want {
			t.Errorf("execHosts(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]int64{"": -1, "30": 30, "01:00": 60, "1:00:00": 3600, "x": -1, "1::": -1} {
		if got := seconds(in); got != want {
			t.Errorf("seconds(%q) = %d, want %d", in, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		want int
	}{{"9.s", "10.s", -1}, {"3[2].s", "3[10].s", -1}, {"3[].s", "3[1].s", -1}, {"5.s", "5.s", 0}, {"11.s", "2.s", 1}} {
		if got := compareIDs(c.a, c.b); got != c.want {
			t.Errorf("compareIDs(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		avail, phys int64
		want        string
	}{{6 << 30, 8 << 30, "6 of 8 GiB free"}, {1536 << 20, 2 << 30, "1.5 of 2 GiB free"}, {500, 1000, "500 of 1000 B free"}, {55 << 30, 64 << 30, "55 of 64 GiB free"}} {
		if got := formatMem(c.avail, c.phys); got != c.want {
			t.Errorf("formatMem(%d, %d) = %q, want %q", c.avail, c.phys, got, c.want)
		}
	}
}
