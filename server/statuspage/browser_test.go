package statuspage

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gopbs/internal/e2e"
	"gopbs/server/monitor"
)

// countingSource counts the snapshots taken of it.
type countingSource struct {
	*fakeSource
	clusters atomic.Int32
}

func (c *countingSource) Cluster() monitor.Cluster {
	c.clusters.Add(1)
	return c.fakeSource.Cluster()
}

// browserSource is a cluster of 16 nodes in every state and load.
func browserSource() *fakeSource {
	src := testSource()
	src.cl.Nodes = nil
	for i := range 16 {
		n := monitor.Node{Name: fmt.Sprintf("cn%02d", i+1), States: []string{"free"}, NP: 8, HasLoad: true, PhysMem: 64 << 30, AvailMem: int64(64-i*3) << 30}
		switch {
		case i < 4:
			n.Load = 0.1 * float64(i)
		case i < 9:
			n.Jobs, n.Load = 4, 3.5+float64(i-4)
		case i < 12:
			n.States, n.Jobs, n.Load = []string{"job-exclusive"}, 8, 7.5+float64(i-9)
		case i < 14:
			n.States, n.HasLoad, n.PhysMem = []string{"down"}, false, 0
		default:
			n.States, n.Load = []string{"offline"}, 0
		}
		src.cl.Nodes = append(src.cl.Nodes, n)
	}
	return src
}

// TestInBrowser loads the page in headless Chromium and checks what a
// person would see: the tables and rows (the DOM the browser built), the
// node grid's colours (pixels of the screenshot), the sorting and
// filtering links, and that the page reloads itself.
func TestInBrowser(t *testing.T) {
	b := e2e.Chromium(t)
	src := &countingSource{fakeSource: browserSource()}
	srv := httptest.NewServer(New(src, Options{Refresh: time.Second}))
	defer srv.Close()

	dom := b.DOM(t, srv.URL+"/")
	for _, want := range []string{
		`<title>GoPBS · head&lt;1&gt;</title>`,
		`<tr data-queue="batch"><td>batch</td><td>Execution</td><td>yes</td><td>yes</td>`,
		`<div class="node down" data-node="cn13" data-state="down"`,
		`<div class="node full" data-node="cn10" data-state="job-exclusive"`,
		`<td><span class="pill st-running">R</span></td>`,
		`6 jobs · 1 running · 3 queued · 16 nodes (4 down or offline) · 44 of 128 processors in use`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the browser's page lacks %s", want)
		}
	}
	if got := strings.Join(jobOrder(dom), " "); got != "9.head 10.head 11.head 12.head 13.head 14.head" {
		t.Errorf("rows %s", got)
	}
	if strings.Count(dom, `class="node `) != 16 {
		t.Errorf("%d node tiles, want 16", strings.Count(dom, `class="node `))
	}
	// What the header links and the filter form lead to.
	dom = b.DOM(t, srv.URL+"/?sort=user&dir=desc")
	if got := strings.Join(jobOrder(dom), " "); got != "12.head 10.head 14.head 9.head 11.head 13.head" {
		t.Errorf("sorted by user, descending: rows %s", got)
	}
	dom = b.DOM(t, srv.URL+"/?user=alice&state=Q")
	if got := strings.Join(jobOrder(dom), " "); got != "9.head" {
		t.Errorf("alice's queued jobs: rows %s", got)
	}

	// The node grid as seen: every state's colour covers tiles.
	path := ""
	if dir := os.Getenv("GOPBS_SCREENSHOT_DIR"); dir != "" {
		path = dir + "/statuspage-test.png"
	}
	img := b.Screenshot(t, srv.URL+"/", 1280, 1000, path)
	for _, c := range []struct {
		what string
		rgb  uint32
		min  int
	}{
		{"free", 0x2e9d57, 4 * 3000}, {"partly used", 0x2b7bb9, 5 * 3000}, {"full", 0x283f9a, 3 * 3000},
		{"down", 0xc62828, 2 * 3000}, {"offline", 0x6b7075, 2 * 3000},
	} {
		if n := e2e.CountColor(img, c.rgb, 6); n < c.min {
			t.Errorf("%s nodes: %d pixels of #%06x in the screenshot, want at least %d", c.what, n, c.rgb, c.min)
		}
	}

	// It reloads itself: a page left open is fetched again and again.
	before := src.clusters.Load()
	stop := b.Open(t, srv.URL+"/?state=R")
	e2e.WaitFor(t, "the open page to reload itself twice", 60*time.Second, func() bool { return src.clusters.Load()-before >= 3 })
	stop()
}

var _ http.Handler = (*Handler)(nil)
