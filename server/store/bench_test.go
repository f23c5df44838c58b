package store

import (
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkApplyParallel applies one-put batches (a job record's size)
// from 8 goroutines per processor, each waiting for its commit, as
// submitting clients do (pgstore has the same benchmark).
func BenchmarkApplyParallel(b *testing.B) {
	s, err := OpenBolt(filepath.Join(b.TempDir(), "db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	val := make([]byte, 1500)
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(p *testing.PB) {
		for p.Next() {
			k := strconv.FormatInt(n.Add(1), 10) + ".vm"
			if err := s.Apply(Put(Jobs, k, val), Put(Script, k, val[:100])); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/float64(s.Commits()), "batches/commit")
}
