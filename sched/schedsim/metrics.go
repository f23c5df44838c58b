package schedsim

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// Metrics summarise a run.
type Metrics struct {
	Jobs, Unstarted int
	// Utilisation is the share of the cluster's slot-seconds used by
	// jobs, from the first submission to the last end.
	Utilisation float64
	MeanWait    float64 // seconds
	P95Wait     float64
	MaxWait     float64
	// MeanBSD is the mean bounded slowdown, max(1, (wait+run)/max(run, 10 s)).
	MeanBSD float64
	// LargestJob is the job asking for the most slots (the longest of
	// them), and LargestWait its wait.
	LargestJob  int
	LargestWait float64
	Makespan    int64
	Cycles      int
}

// Metrics computes the figures of a run.
func (r *Result) Metrics() Metrics {
	m := Metrics{Jobs: len(r.Jobs), Cycles: r.Cycles}
	var waits []float64
	first, last := int64(math.MaxInt64), int64(0)
	work, bsd := 0.0, 0.0
	var largest *JobResult
	for i := range r.Jobs {
		j := &r.Jobs[i]
		first = min(first, j.Submit)
		if j.Start < 0 {
			m.Unstarted++
			continue
		}
		last = max(last, j.End)
		wait := float64(j.Start - j.Submit)
		waits = append(waits, wait)
		work += float64(j.Procs) * float64(j.Runtime)
		bsd += max(1, (wait+float64(j.Runtime))/max(float64(j.Runtime), 10))
		if largest == nil || j.Procs > largest.Procs || j.Procs == largest.Procs && j.Runtime > largest.Runtime {
			largest = j
		}
	}
	if len(waits) == 0 {
		return m
	}
	m.Makespan = last - first
	if m.Makespan > 0 {
		m.Utilisation = work / (float64(r.Nodes*r.NP) * float64(m.Makespan))
	}
	slices.Sort(waits)
	sum := 0.0
	for _, w := range waits {
		sum += w
	}
	m.MeanWait = sum / float64(len(waits))
	m.P95Wait = waits[min(len(waits)-1, int(math.Ceil(0.95*float64(len(waits))))-1)]
	m.MaxWait = waits[len(waits)-1]
	m.MeanBSD = bsd / float64(len(waits))
	m.LargestJob = largest.ID
	m.LargestWait = float64(largest.Start - largest.Submit)
	return m
}

// WriteTable writes the metrics of several runs side by side.
func WriteTable(w io.Writer, results []*Result) {
	fmt.Fprintf(w, "%-22s %7s %11s %11s %11s %9s %16s %7s\n", "policy", "util", "mean wait", "p95 wait", "max wait", "mean BSD", "largest job wait", "cycles")
	for _, r := range results {
		m := r.Metrics()
		fmt.Fprintf(w, "%-22s %6.1f%% %11s %11s %11s %9.2f %16s %7d\n", r.Mode, 100*m.Utilisation, hms(m.MeanWait), hms(m.P95Wait),
			hms(m.MaxWait), m.MeanBSD, hms(m.LargestWait), m.Cycles)
		if m.Unstarted > 0 {
			fmt.Fprintf(w, "%-22s %d jobs never started\n", "", m.Unstarted)
		}
	}
}

// hms formats seconds as H:MM:SS.
func hms(s float64) string {
	t := int64(math.Round(s))
	return fmt.Sprintf("%d:%02d:%02d", t/3600, t/60%60, t%60)
}
