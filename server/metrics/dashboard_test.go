package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"gopbs/batchreq"
	mommetrics "gopbs/mom/metrics"
)

// TestGrafanaDashboard checks contrib/grafana/gopbs-dashboard.json: it is
// valid JSON, and every gopbs_ metric its queries name (histogram and
// counter suffixes included) is one that pbs_server or pbs_mom exports.
func TestGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "contrib", "grafana", "gopbs-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	exported := map[string]bool{}
	srv := New(&fakeSource{cl: testCluster()})
	srv.Request(batchreq.PBS_BATCH_QueueJob, time.Millisecond)
	srv.StoreCommit(time.Millisecond, 1)
	srv.SchedCycle("default", time.Second)
	mom := mommetrics.New(momNode{}, "v")
	for _, g := range []prometheus.Gatherer{srv.Registry(), mom.Registry()} {
		fams, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			exported[f.GetName()] = true
			if f.GetType() == dto.MetricType_HISTOGRAM {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					exported[f.GetName()+s] = true
				}
			}
		}
	}
	re := regexp.MustCompile(`\b(gopbs_[a-z0-9_]+|process_[a-z_]+|go_[a-z_]+)\b`)
	queries := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			queries++
			for _, name := range re.FindAllString(tg.Expr, -1) {
				if !exported[name] {
					t.Errorf("panel %q: %s is not exported (query %s)", p.Title, name, tg.Expr)
				}
			}
			if strings.Count(tg.Expr, "(") != strings.Count(tg.Expr, ")") {
				t.Errorf("panel %q: unbalanced query %s", p.Title, tg.Expr)
			}
		}
	}
	if queries < 15 {
		t.Errorf("%d queries in the dashboard", queries)
	}
}

type momNode struct{}

func (momNode) Node() mommetrics.Node {
	return mommetrics.Node{Name: "n", Load: 1, HasLoad: true, PhysMem: 1, AvailMem: 1, TotalMem: 1, CPUs: 1}
}
