// Package schedsim replays a workload through the real scheduling policy
// (package policy, with its resource-time profile) in simulated time on
// simulated nodes, without daemons: each cycle it builds the world the
// daemon would read from the server, runs policy.Scheduler.Cycle on it,
// carries out the actions in memory and advances the clock to the next
// event (a submission, a job's end, a planned start). It reads workloads
// in the Standard Workload Format of the Parallel Workloads Archive (SWF)
// or generates synthetic ones, and measures utilisation, waits and
// bounded slowdown; it also draws the node-time chart as SVG.
package schedsim

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand"
	"strconv"
	"strings"
)

// Job is one job of a workload. Times are seconds from the workload's
// start.
type Job struct {
	ID       int
	Submit   int64
	Runtime  int64 // actual run time (capped at Walltime when it has one)
	Walltime int64 // requested run time; 0 for none
	Procs    int   // processors (slots) requested
	User     int
	Reserve  bool
	Queue    int // index in Options.Queues
}

// Workload is a list of jobs in submission order.
type Workload []Job

// SWFError reports a line of an SWF file that is not a valid job line.
type SWFError struct {
	Line   int
	Text   string
	Reason string
}

func (e *SWFError) Error() string {
	return fmt.Sprintf("SWF line %d: %s: %q", e.Line, e.Reason, e.Text)
}

// ReadSWF reads an SWF file: header and comment lines start with ';';
// every other non-blank line has the 18 numeric fields of the format.
// Jobs with an unknown run time or processor count (-1) or that did not
// run (run time 0) are skipped and counted. A malformed line stops the
// reading with an *SWFError naming it: nothing is guessed.
func ReadSWF(r io.Reader) (w Workload, skipped int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 18 {
			return nil, skipped, &SWFError{Line: n, Text: line, Reason: fmt.Sprintf("%d fields, want 18", len(f))}
		}
		var v [18]float64
		for i, s := range f {
			x, perr := strconv.ParseFloat(s, 64)
			if perr != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < -1 || x > 1e12 {
				return nil, skipped, &SWFError{Line: n, Text: line, Reason: fmt.Sprintf("field %d (%q) is not a number of the format", i+1, s)}
			}
			v[i] = x
		}
		procs := int(v[7]) // requested processors
		if procs <= 0 {
			procs = int(v[4]) // allocated processors
		}
		runtime := int64(v[3])
		if procs <= 0 || runtime <= 0 || v[1] < 0 {
			skipped++
			continue
		}
		j := Job{ID: int(v[0]), Submit: int64(v[1]), Runtime: runtime, Procs: procs, User: max(int(v[11]), 0)}
		if v[8] > 0 {
			j.Walltime = int64(v[8])
			j.Runtime = min(j.Runtime, j.Walltime)
		}
		w = append(w, j)
	}
	if err := sc.Err(); err != nil {
		return nil, skipped, fmt.Errorf("read SWF: %w", err)
	}
	for i := 1; i < len(w); i++ {
		if w[i].Submit < w[i-1].Submit {
			return nil, skipped, fmt.Errorf("SWF: job %d submitted before job %d: jobs must be in submission order", w[i].ID, w[i-1].ID)
		}
	}
	return w, skipped, nil
}

// WriteSWF writes w in SWF (unknown fields -1), so that a generated
// workload can be kept and replayed.
func WriteSWF(out io.Writer, w Workload, comment string) error {
	bw := bufio.NewWriter(out)
	fmt.Fprintf(bw, "; %s\n", comment)
	for _, j := range w {
		wall := j.Walltime
		if wall == 0 {
			wall = -1
		}
		fmt.Fprintf(bw, "%d %d -1 %d %d -1 -1 %d %d -1 1 %d -1 -1 -1 -1 -1 -1\n",
			j.ID, j.Submit, j.Runtime, j.Procs, j.Procs, wall, j.User)
	}
	return bw.Flush()
}

// Synthetic describes a generated workload in the spirit of the
// Lublin–Feitelson model of rigid parallel jobs: a share of serial jobs,
// parallel sizes drawn log-uniformly with a strong preference for powers
// of two, log-normal run times that grow with the size, user estimates
// (walltime) that exceed the run time by a random factor, and Poisson
// arrivals scaled to an offered load. It is a simplified model, not the
// published one: its parameters are below.
type Synthetic struct {
	Jobs   int
	Slots  int     // the cluster's slots: the largest job asks for all of them
	Load   float64 // offered load (0.9: 90 % of the cluster's capacity)
	Seed   int64
	Serial float64 // share of one-slot jobs (default 0.25)
	Users  int     // default 32
}

// Generate returns the workload.
func (s Synthetic) Generate() Workload {
	rng := rand.New(rand.NewSource(s.Seed))
	serial := s.Serial
	if serial == 0 {
		serial = 0.25
	}
	users := max(s.Users, 1)
	if s.Users == 0 {
		users = 32
	}
	maxLog := math.Log2(float64(max(s.Slots, 1)))
	w := make(Workload, s.Jobs)
	work := 0.0
	for i := range w {
		procs := 1
		if rng.Float64() >= serial {
			l := 1 + rng.Float64()*(maxLog-1)
			if rng.Float64() < 0.75 {
				l = math.Round(l) // powers of two
			}
			procs = min(max(int(math.Round(math.Exp2(l))), 2), s.Slots)
		}
		// run time: log-normal, median 20 min for serial jobs, growing
		// with the log of the size; capped at 36 h
		mu := math.Log(1200) + 0.25*math.Log2(float64(procs))
		rt := int64(math.Min(math.Exp(mu+1.3*rng.NormFloat64()), 36*3600))
		rt = max(rt, 30)
		// walltime: the run time times 1–4, rounded up to 5 minutes
		wall := int64(float64(rt) * (1 + 3*rng.Float64()))
		wall = (wall + 299) / 300 * 300
		w[i] = Job{ID: i + 1, Runtime: rt, Walltime: wall, Procs: procs, User: rng.Intn(users)}
		work += float64(rt) * float64(procs)
	}
	// Poisson arrivals at the rate that gives the offered load.
	load := s.Load
	if load <= 0 {
		load = 0.9
	}
	span := work / (float64(max(s.Slots, 1)) * load)
	rate := float64(s.Jobs) / span
	t := 0.0
	for i := range w {
		t += rng.ExpFloat64() / rate
		w[i].Submit = int64(t)
	}
	return w
}
