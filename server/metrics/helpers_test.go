package metrics

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func gather(t *testing.T, m *Metrics, name string) []*dto.MetricFamily {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.MetricFamily
	for _, mf := range mfs {
		if mf.GetName() == name {
			out = append(out, mf)
		}
	}
	return out
}

func hasLabel(ls []*dto.LabelPair, name, value string) bool {
	for _, l := range ls {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}
