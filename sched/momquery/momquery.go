// Package momquery asks MOMs for the node facts the FIFO scheduler uses,
// over the resource-monitor (RM) protocol: one RM_CMD_REQUEST per node per
// cycle with the lines ncpus, arch, physmem, loadave, max_load and
// ideal_load (spec 14 §4, spec 10 §10).
package momquery

import (
	"context"
	"strconv"
	"strings"

	"gopbs/sched/world"
)

// Lines are the request lines of the scheduler's query, in order.
var Lines = []string{"ncpus", "arch", "physmem", "loadave", "max_load", "ideal_load"}

// SysTimeLine is the request line the NAS policy adds for HIGH_SYSTIME:
// the percentage of CPU time a host spends in system mode. Neither
// TORQUE's MOM nor GoPBS's computes it; a site defines it as a shell
// resource in mom_priv/config ("systime !/usr/local/sbin/systime"), and
// MOMs without it answer "? 15201" (the node is then not checked).
const SysTimeLine = "systime"

// ApplySysTime stores the answer to SysTimeLine in n.
func ApplySysTime(n *world.Node, answer string) {
	v, ok := answerValue(answer, SysTimeLine)
	if !ok {
		return
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, "%")), 64); err == nil && f >= 0 && f <= 100 {
		n.SysTime, n.HasSysTime = f, true
	}
}

// Querier sends one RM request to the MOM on host and returns its answer
// lines (one per request line, "name=value" or "name=? <errno>").
// Implementations must be safe for concurrent use: the scheduler asks
// many MOMs at once.
type Querier interface {
	Query(ctx context.Context, host string, lines []string) ([]string, error)
}

// HostKeyer is implemented by a Querier that must not have two queries
// to the same MOM endpoint in flight at once. HostKey returns what
// identifies the endpoint of host; hosts with the same key are asked one
// after the other.
type HostKeyer interface {
	HostKey(host string) string
}

// answerValue strips "name=" from an answer; ok is false for an error
// answer ("? 15201") or a malformed one.
func answerValue(answer, name string) (string, bool) {
	v, found := strings.CutPrefix(answer, name+"=")
	if !found {
		// Some MOMs answer with the bare value.
		v = answer
	}
	if strings.HasPrefix(v, "?") {
		return "", false
	}
	return v, true
}

// Apply stores the answers to Lines in n, with TORQUE's fallbacks: ncpus
// 1, loadave −1, max_load and ideal_load = ncpus.
func Apply(n *world.Node, answers []string) {
	get := func(i int) (string, bool) {
		if i >= len(answers) {
			return "", false
		}
		return answerValue(answers[i], Lines[i])
	}
	n.MomOK = true
	n.NCPUs = 1
	if v, ok := get(0); ok {
		if c, err := strconv.Atoi(v); err == nil && c > 0 {
			n.NCPUs = c
		}
	}
	if v, ok := get(1); ok {
		n.Arch = v
	}
	if v, ok := get(2); ok {
		if m, ok := world.ParseSize(v); ok {
			n.PhysMem = m
		}
	}
	n.LoadAve = -1
	if v, ok := get(3); ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			n.LoadAve = f
		}
	}
	n.MaxLoad, n.IdealLoad = float64(n.NCPUs), float64(n.NCPUs)
	if v, ok := get(4); ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			n.MaxLoad = f
		}
	}
	if v, ok := get(5); ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			n.IdealLoad = f
		}
	}
}
