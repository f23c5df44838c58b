package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cyclesPath is where pbs_server's debug listener serves its recent
// scheduling cycles (server/debug.go).
const cyclesPath = "/debug/gopbs/sched_cycles"

// cycle is one scheduling cycle as pbs_server reports it.
type cycle struct {
	Seq     int64     `json:"seq"`
	Command string    `json:"command"`
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
	Started int       `json:"started"`
}

// cycleReport is the document served at cyclesPath.
type cycleReport struct {
	Total  int64   `json:"total"`
	Cycles []cycle `json:"cycles"`
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

// fetchCycles asks pbs_server's debug listener at addr for its cycles.
func fetchCycles(addr string) (*cycleReport, error) {
	resp, err := httpClient.Get("http://" + addr + cyclesPath)
	if err != nil {
		return nil, fmt.Errorf("scheduling cycles: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scheduling cycles: %s (a pbs_server without the debug listener?)", resp.Status)
	}
	return decodeCycles(resp.Body)
}

func decodeCycles(r io.Reader) (*cycleReport, error) {
	var rep cycleReport
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("scheduling cycles: %w", err)
	}
	return &rep, nil
}

// newCycles returns the cycles of rep numbered after seq, in order.
func newCycles(rep *cycleReport, seq int64) []cycle {
	var out []cycle
	for _, c := range rep.Cycles {
		if c.Seq > seq {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b cycle) int { return int(a.Seq - b.Seq) })
	return out
}

// collectCycles waits for the cycles numbered after seq until it has the
// first one and cfg.cycles more, printing each as it ends and calling
// seen with it.
func collectCycles(ctx context.Context, cfg *config, seq int64, out io.Writer, seen func(cycle)) ([]cycle, error) {
	want := 1 + cfg.cycles
	limit := cfg.wait + time.Duration(want*cfg.iteration)*time.Second
	var got []cycle
	err := waitUntil(ctx, limit, 100*time.Millisecond, func() (bool, error) {
		rep, err := fetchCycles(cfg.serverDebug)
		if err != nil {
			return false, err
		}
		for _, c := range newCycles(rep, seq) {
			if len(got) == want {
				break
			}
			got = append(got, c)
			seq = c.Seq
			label := ""
			if len(got) == 1 {
				label = " (first after the submission)"
			}
			fmt.Fprintf(out, "cycle %d: %s %.3fs started=%d%s\n", c.Seq, c.Command, c.Seconds, c.Started, label)
			seen(c)
		}
		return len(got) == want, nil
	})
	return got, err
}

// cpuWatch measures the CPU time pbs_server and pbs_sched use between
// two marks.
type cpuWatch struct {
	pids  [2]int
	marks [][2]time.Duration
}

func newWatch(server, sched int) *cpuWatch { return &cpuWatch{pids: [2]int{server, sched}} }

// mark records both processes' CPU time so far.
func (w *cpuWatch) mark() {
	var m [2]time.Duration
	for i, pid := range w.pids {
		m[i], _ = processCPU(pid)
	}
	w.marks = append(w.marks, m)
}

// peakRSS returns the daemons' peak resident set sizes (VmHWM) so far.
func (w *cpuWatch) peakRSS() (server, sched int64, ok bool) {
	var kb [2]int64
	for i, pid := range w.pids {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			return 0, 0, false
		}
		if kb[i], err = parseHWM(string(b)); err != nil {
			return 0, 0, false
		}
	}
	return kb[0] << 10, kb[1] << 10, true
}

// parseHWM returns the VmHWM line of a /proc/<pid>/status file in KiB.
func parseHWM(status string) (int64, error) {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) != 2 || f[1] != "kB" {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM line in %q", status)
}

// later returns the CPU time used between the first and the last mark.
func (w *cpuWatch) later() (server, sched time.Duration, ok bool) {
	if len(w.marks) < 2 {
		return 0, 0, false
	}
	a, b := w.marks[0], w.marks[len(w.marks)-1]
	return b[0] - a[0], b[1] - a[1], true
}

// clockTick is the kernel's USER_HZ, the unit of /proc/<pid>/stat times
// (100 on every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// processCPU returns the user and system time of process pid.
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU returns utime+stime of a /proc/<pid>/stat line. The
// command name may hold spaces and parentheses, so fields are counted
// from its closing parenthesis: state is field 3, utime 14, stime 15.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short stat line %q", stat)
	}
	var total time.Duration
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat line %q: %w", stat, err)
		}
		total += time.Duration(n) * clockTick
	}
	return total, nil
}

// summarize returns the summary line: the first cycle, the later
// cycles' minimum, median and maximum, and the daemons' CPU per later
// cycle.
func summarize(cycles []cycle, w *cpuWatch) string {
	if len(cycles) == 0 {
		return "summary: no cycle"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "summary: first=%.3fs", cycles[0].Seconds)
	later := make([]float64, 0, len(cycles)-1)
	for _, c := range cycles[1:] {
		later = append(later, c.Seconds)
	}
	if len(later) == 0 {
		return b.String()
	}
	slices.Sort(later)
	fmt.Fprintf(&b, " later: n=%d min=%.3fs median=%.3fs max=%.3fs", len(later), later[0], median(later), later[len(later)-1])
	if srv, sch, ok := w.later(); ok {
		n := time.Duration(len(later))
		fmt.Fprintf(&b, " cpu/cycle: pbs_server=%.3fs pbs_sched=%.3fs", (srv / n).Seconds(), (sch / n).Seconds())
	}
	return b.String()
}

// median returns the median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// takeProfiles fetches CPU profiles of both daemons at once, writing
// them to cfg.profileDir; the channel receives the outcome.
func takeProfiles(cfg *config) <-chan error {
	done := make(chan error, 1)
	go func() {
		if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
			done <- err
			return
		}
		errs := make(chan error, 2)
		for name, addr := range map[string]string{"pbs_server": cfg.serverDebug, "pbs_sched": cfg.schedDebug} {
			go func() {
				errs <- fetchProfile(addr, cfg.profileSeconds, filepath.Join(cfg.profileDir, name+".pprof"))
			}()
		}
		var first error
		for range 2 {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		done <- first
	}()
	return done
}

// fetchProfile writes a CPU profile of seconds from the debug listener at
// addr to path.
func fetchProfile(addr string, seconds int, path string) error {
	c := &http.Client{Timeout: time.Duration(seconds+30) * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds))
	if err != nil {
		return fmt.Errorf("profile from %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile from %s: %s", addr, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profile from %s: %w", addr, err)
	}
	return f.Close()
}
