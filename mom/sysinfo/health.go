package sysinfo

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LoadState tracks the busy/free decision of spec 10 §5.7: the node turns
// busy when the 1-minute load reaches max_load and free again when it drops
// to ideal_load or below.
type LoadState struct {
	busy bool
}

// Update feeds a load sample with the current thresholds (negative = unset)
// and reports whether the node is busy and whether that changed.
func (s *LoadState) Update(load, maxLoad, idealLoad float64) (busy, changed bool) {
	was := s.busy
	switch {
	case maxLoad < 0 && idealLoad < 0:
		s.busy = false
	case !s.busy && maxLoad >= 0 && load >= maxLoad:
		s.busy = true
	case s.busy && idealLoad >= 0 && load <= idealLoad:
		s.busy = false
	}
	return s.busy, s.busy != was
}

// AutoLoad evaluates an $auto_max_load/$auto_ideal_load expression: 'c'
// (number of CPUs) or 't' (number of running job tasks), then an operator
// + - * / and a number, e.g. "c*1.5" or "t+2".
func AutoLoad(expr string, ncpus, ntasks int) (float64, error) {
	expr = strings.TrimSpace(expr)
	if len(expr) < 1 {
		return 0, fmt.Errorf("empty load expression")
	}
	var base float64
	switch expr[0] {
	case 'c':
		base = float64(ncpus)
	case 't':
		base = float64(ntasks)
	default:
		return 0, fmt.Errorf("load expression %q must start with c or t", expr)
	}
	rest := strings.TrimSpace(expr[1:])
	if rest == "" {
		return base, nil
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(rest[1:]), 64)
	if err != nil {
		return 0, fmt.Errorf("bad load expression %q", expr)
	}
	switch rest[0] {
	case '+':
		return base + n, nil
	case '-':
		return base - n, nil
	case '*':
		return base * n, nil
	case '/':
		if n == 0 {
			return 0, fmt.Errorf("division by zero in %q", expr)
		}
		return base / n, nil
	}
	return 0, fmt.Errorf("bad operator in load expression %q", expr)
}

// HealthResult is the outcome of a $node_check_script run.
type HealthResult struct {
	Message string // node message ("" = none)
	Down    bool   // an ERROR line was found
}

// RunHealthCheck runs the node health check script and interprets its
// output: the first line starting with "ERROR" becomes the message and marks
// the node down; a line starting with "EVENT:" becomes the message only.
func RunHealthCheck(ctx context.Context, script string, timeout time.Duration) (HealthResult, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, script).Output()
	res := ParseHealthOutput(string(out))
	if err != nil && res.Message == "" {
		return res, fmt.Errorf("node check script %s: %w", script, err)
	}
	return res, nil
}

// ParseHealthOutput interprets health check output.
func ParseHealthOutput(out string) HealthResult {
	var res HealthResult
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(line, "ERROR"):
			return HealthResult{Message: line, Down: true}
		case strings.HasPrefix(line, "EVENT:") && res.Message == "":
			res.Message = line
		}
	}
	return res
}

// VarAttrRunner runs the $varattr commands and caches their output for
// their TTL (-1 = run once).
type VarAttrRunner struct {
	mu      sync.Mutex
	entries []varAttrEntry
	now     func() time.Time
}

type varAttrEntry struct {
	ttl     int
	command string
	value   string
	ran     time.Time
	done    bool
}

// NewVarAttrRunner returns a runner for (ttl, command) pairs.
func NewVarAttrRunner(ttls []int, commands []string) *VarAttrRunner {
	r := &VarAttrRunner{now: time.Now}
	for i, c := range commands {
		r.entries = append(r.entries, varAttrEntry{ttl: ttls[i], command: c})
	}
	return r
}

// Value returns the outputs (first line of each command, trimmed) joined by
// ";", re-running commands whose TTL expired.
func (r *VarAttrRunner) Value(ctx context.Context) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	parts := make([]string, 0, len(r.entries))
	now := r.now()
	for i := range r.entries {
		e := &r.entries[i]
		stale := !e.done || (e.ttl >= 0 && now.Sub(e.ran) >= time.Duration(e.ttl)*time.Second)
		if stale {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			out, _ := exec.CommandContext(cctx, "/bin/sh", "-c", e.command).Output()
			cancel()
			line, _, _ := strings.Cut(string(out), "\n")
			e.value, e.ran, e.done = strings.TrimSpace(line), now, true
		}
		parts = append(parts, e.value)
	}
	return strings.Join(parts, ";")
}
