// Package config reads the FIFO scheduler's policy file
// sched_priv/sched_config.
//
// Each statement is "name[:] value [prime|non_prime|all|none]". Settings
// that TORQUE keeps separately for prime and non-prime time are stored as
// a Periodic value; the rest are plain fields. Compiled-in defaults are all
// zero, as in TORQUE; Shipped holds the sample file installed with it.
package config

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Period selects prime or non-prime time.
type Period int

// The two scheduling periods.
const (
	Prime Period = iota
	NonPrime
)

func (p Period) String() string {
	if p == NonPrime {
		return "non_prime"
	}
	return "prime"
}

// Periodic is a setting with one value for prime time and one for
// non-prime time.
type Periodic[T any] [2]T

// At returns the value for period p.
func (v Periodic[T]) At(p Period) T { return v[p] }

// SortKey names a job ordering (the sort_by and key values).
type SortKey int

// Sort keys, named as in sched_config.
const (
	NoSort SortKey = iota
	ShortestJobFirst
	LongestJobFirst
	SmallestMemoryFirst
	LargestMemoryFirst
	HighPriorityFirst
	LowPriorityFirst
	LargeWalltimeFirst
	ShortWalltimeFirst
	FairShareSort
	MultiSort
)

var sortNames = [...]string{
	NoSort:              "no_sort",
	ShortestJobFirst:    "shortest_job_first",
	LongestJobFirst:     "longest_job_first",
	SmallestMemoryFirst: "smallest_memory_first",
	LargestMemoryFirst:  "largest_memory_first",
	HighPriorityFirst:   "high_priority_first",
	LowPriorityFirst:    "low_priority_first",
	LargeWalltimeFirst:  "large_walltime_first",
	ShortWalltimeFirst:  "short_walltime_first",
	FairShareSort:       "fair_share",
	MultiSort:           "multi_sort",
}

func (k SortKey) String() string {
	if k >= 0 && int(k) < len(sortNames) {
		return sortNames[k]
	}
	return fmt.Sprintf("SortKey(%d)", int(k))
}

// ParseSortKey returns the sort key called name.
func ParseSortKey(name string) (SortKey, bool) {
	for i, n := range sortNames {
		if n == name {
			return SortKey(i), true
		}
	}
	return NoSort, false
}

// SMPDist is a smp_cluster_dist value: how the scheduler spreads jobs
// that request no nodes over the cluster nodes.
type SMPDist int

// The smp_cluster_dist values. SMPUnset leaves the choice to the server,
// as TORQUE 2.5.13's scheduler does.
const (
	SMPUnset SMPDist = iota
	SMPPack
	SMPRoundRobin
	SMPLowestLoad
)

var smpNames = [...]string{SMPUnset: "", SMPPack: "pack", SMPRoundRobin: "round_robin", SMPLowestLoad: "lowest_load"}

func (d SMPDist) String() string {
	if d >= 0 && int(d) < len(smpNames) {
		return smpNames[d]
	}
	return fmt.Sprintf("SMPDist(%d)", int(d))
}

// ParseSMPDist returns the smp_cluster_dist value called name.
func ParseSMPDist(name string) (SMPDist, bool) {
	for i, n := range smpNames {
		if n == name && i != int(SMPUnset) {
			return SMPDist(i), true
		}
	}
	return SMPUnset, false
}

// MaxIgnoreQueues is the number of ignore_queue lines honoured.
const MaxIgnoreQueues = 16

// MaxDedicatedPrefix is the longest dedicated_prefix kept.
const MaxDedicatedPrefix = 15

// Config is the content of sched_config.
type Config struct {
	RoundRobin       Periodic[bool]
	ByQueue          Periodic[bool]
	StrictFIFO       Periodic[bool]
	FairShare        Periodic[bool]
	HelpStarvingJobs Periodic[bool]
	SortQueues       Periodic[bool]
	LoadBalancing    Periodic[bool]
	LoadBalancingRR  Periodic[bool]
	SortBy           Periodic[SortKey]
	// Keys are the multi_sort keys, in order.
	Keys Periodic[[]SortKey]
	// SMPClusterDist is smp_cluster_dist, a key of later PBS schedulers
	// that TORQUE 2.5.13 lacks: pack, round_robin or lowest_load.
	SMPClusterDist Periodic[SMPDist]
	// Resources is the resources line, a key of later PBS schedulers:
	// the resources whose requests are checked against what the server
	// and the queues have available. nil (no resources line) keeps
	// TORQUE 2.5.13's fixed set: mem, ncpus and nodect.
	Resources []string

	// MaxReservation is max_reservation (seed 004): the number of
	// reservations the scheduler makes per cycle for jobs that ask for
	// one (reserve=y) and cannot start now. 0, the default, turns
	// reservation and backfilling off.
	MaxReservation Periodic[int]
	// DefaultDuration is default_duration: the run time assumed for a
	// job without a walltime when planning (never enforced). 0, the
	// default, is infinity: such a job is never planned to end.
	DefaultDuration Periodic[time.Duration]
	// DurationOffset is duration_offset (or params DURATION_OFFSET): the
	// time added to every planned run time for the delays around a job.
	// Use Offset, which gives the default of 60 seconds when unset.
	DurationOffset Periodic[OptDuration]
	// Monitor is params MONITOR: append each cycle's plan to
	// sched_priv/schedule.
	Monitor Periodic[bool]

	MaxStarve       time.Duration
	HalfLife        time.Duration
	SyncTime        time.Duration
	UnknownShares   int
	LogFilter       int
	DedicatedPrefix string
	IgnoreQueues    []string

	// PluS holds PluS's scheduler keys (JobSortKey, NodeSortKey,
	// OwnersOrder, ...; plus.go), nil when the file has none.
	PluS *PluS
}

// DefaultDurationOffset is duration_offset when it is not set.
const DefaultDurationOffset = 60 * time.Second

// OptDuration is a duration setting that may be unset.
type OptDuration struct {
	D   time.Duration
	Set bool
}

// Offset returns duration_offset for period p: its value, or
// DefaultDurationOffset when unset.
func (c *Config) Offset(p Period) time.Duration {
	if v := c.DurationOffset[p]; v.Set {
		return v.D
	}
	return DefaultDurationOffset
}

// Shipped is the sample sched_config installed with TORQUE 2.5.13, in
// effect the defaults a site starts from.
//
//go:embed sched_config
var Shipped string

// LineError reports a line of the file that could not be used; its text
// is the message TORQUE prints on stderr.
type LineError struct {
	File   string
	Line   int
	Reason string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("Error reading line %d of file %s", e.Line, e.File)
}

// ReadFile parses the file at path. Unusable lines are reported in errs
// and otherwise ignored; err is set only when the file cannot be read.
func ReadFile(path string) (cfg *Config, errs []*LineError, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read sched_config: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a sched_config from r; name is used in error messages.
func Parse(r io.Reader, name string) (*Config, []*LineError, error) {
	cfg := &Config{}
	var errs []*LineError
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		handled, reason := cfg.applyPluS(line, n)
		if !handled {
			reason = cfg.apply(line)
		}
		if reason != "" {
			errs = append(errs, &LineError{File: name, Line: n, Reason: reason})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, errs, fmt.Errorf("read %s: %w", name, err)
	}
	if line, reason := cfg.finishPluS(); reason != "" {
		errs = append(errs, &LineError{File: name, Line: line, Reason: reason})
	}
	return cfg, errs, nil
}

// splitLine splits a statement into name, value and the optional period
// word. The name ends at the first ':' or blank; the value and period are
// blank separated (a value may itself contain ':' as in 24:00:00).
func splitLine(line string) (name, value, period string, extra bool) {
	i := strings.IndexAny(line, ": \t")
	if i < 0 {
		return line, "", "", false
	}
	name = line[:i]
	rest := strings.TrimLeft(line[i:], ": \t")
	f := strings.Fields(rest)
	switch len(f) {
	case 0:
	case 1:
		value = f[0]
	case 2:
		value, period = f[0], f[1]
	default:
		value, period, extra = f[0], f[1], true
	}
	return name, value, period, extra
}

// periods returns which periods the third word selects.
func periods(word string) (prime, nonPrime, ok bool) {
	switch strings.ToLower(word) {
	case "", "all":
		return true, true, true
	case "prime":
		return true, false, true
	case "non_prime":
		return false, true, true
	case "none":
		return false, false, true
	}
	return false, false, false
}

func setPeriodic[T any](p *Periodic[T], v T, prime, nonPrime bool) {
	if prime {
		p[Prime] = v
	}
	if nonPrime {
		p[NonPrime] = v
	}
}

// apply interprets one statement; it returns a reason when the line is
// unusable.
func (c *Config) apply(line string) string {
	if rest, ok := cutKey(line, "resources"); ok {
		return c.applyResources(rest)
	}
	name, value, word, extra := splitLine(line)
	if extra {
		return "too many words"
	}
	if value == "" {
		return "missing value"
	}
	prime, nonPrime, ok := periods(word)
	if !ok {
		return "bad period " + strconv.Quote(word)
	}
	boolKeys := map[string]*Periodic[bool]{
		"round_robin":        &c.RoundRobin,
		"by_queue":           &c.ByQueue,
		"strict_fifo":        &c.StrictFIFO,
		"fair_share":         &c.FairShare,
		"help_starving_jobs": &c.HelpStarvingJobs,
		"sort_queues":        &c.SortQueues,
		"load_balancing":     &c.LoadBalancing,
		"load_balancing_rr":  &c.LoadBalancingRR,
	}
	if p, ok := boolKeys[name]; ok {
		b, err := ParseBool(value)
		if err != nil {
			return err.Error()
		}
		setPeriodic(p, b, prime, nonPrime)
		return ""
	}
	switch name {
	case "sort_by":
		k, ok := ParseSortKey(value)
		if !ok {
			return "unknown sort " + strconv.Quote(value)
		}
		setPeriodic(&c.SortBy, k, prime, nonPrime)
	case "key":
		k, ok := ParseSortKey(value)
		if !ok || k == MultiSort {
			return "unknown sort key " + strconv.Quote(value)
		}
		// TORQUE quirk: prime (or all) keys go to both lists and
		// non_prime keys are silently dropped.
		if prime {
			c.Keys[Prime] = append(c.Keys[Prime], k)
			c.Keys[NonPrime] = append(c.Keys[NonPrime], k)
		}
	case "max_reservation":
		n, err := parseInt(value)
		if err != nil || n < 0 {
			return "bad max_reservation " + strconv.Quote(value)
		}
		setPeriodic(&c.MaxReservation, n, prime, nonPrime)
	case "default_duration":
		d, err := parseDuration(value)
		if err != nil {
			return err.Error()
		}
		setPeriodic(&c.DefaultDuration, d, prime, nonPrime)
	case "duration_offset":
		d, err := ParseTime(value)
		if err != nil {
			return err.Error()
		}
		setPeriodic(&c.DurationOffset, OptDuration{D: d, Set: true}, prime, nonPrime)
	case "params":
		return c.applyParams(value, prime, nonPrime)
	case "max_starve", "half_life", "sync_time":
		d, err := ParseTime(value)
		if err != nil {
			return err.Error()
		}
		switch name {
		case "max_starve":
			c.MaxStarve = d
		case "half_life":
			c.HalfLife = d
		default:
			c.SyncTime = d
		}
	case "unknown_shares", "log_filter":
		n, err := parseInt(value)
		if err != nil {
			return err.Error()
		}
		if name == "unknown_shares" {
			c.UnknownShares = n
		} else {
			c.LogFilter = n
		}
	case "dedicated_prefix":
		if len(value) > MaxDedicatedPrefix {
			value = value[:MaxDedicatedPrefix]
		}
		c.DedicatedPrefix = value
	case "smp_cluster_dist":
		d, ok := ParseSMPDist(value)
		if !ok {
			return "unknown smp_cluster_dist " + strconv.Quote(value)
		}
		setPeriodic(&c.SMPClusterDist, d, prime, nonPrime)
	case "ignore_queue":
		if len(c.IgnoreQueues) >= MaxIgnoreQueues {
			return "too many ignore_queue lines"
		}
		c.IgnoreQueues = append(c.IgnoreQueues, value)
	default:
		return "unknown keyword " + strconv.Quote(name)
	}
	return ""
}

// cutKey returns what follows key in a statement starting with key and a
// ':' or blank.
func cutKey(line, key string) (string, bool) {
	rest, ok := strings.CutPrefix(line, key)
	if !ok || rest == "" || !strings.ContainsRune(": \t", rune(rest[0])) {
		return "", false
	}
	return strings.TrimLeft(rest, ": \t"), true
}

// applyResources reads the value of a resources line: resource names
// separated by commas or blanks, usually within double quotes, as in
// resources: "ncpus, mem, arch".
func (c *Config) applyResources(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, `"`) {
		end := strings.IndexByte(v[1:], '"')
		if end < 0 {
			return "unterminated quote"
		}
		if strings.TrimSpace(v[end+2:]) != "" {
			return "too many words"
		}
		v = v[1 : end+1]
	}
	names := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(names) == 0 {
		return "missing value"
	}
	c.Resources = names
	return ""
}

// parseDuration reads default_duration: a time, or "infinity" (0).
func parseDuration(s string) (time.Duration, error) {
	if strings.EqualFold(s, "infinity") {
		return 0, nil
	}
	return ParseTime(s)
}

// applyParams reads a params value: comma-separated words, each MONITOR
// (or MONITOR=bool) or DURATION_OFFSET=time, or the single word none
// (every parameter off). Nothing is set when a word is bad.
func (c *Config) applyParams(v string, prime, nonPrime bool) string {
	if strings.EqualFold(v, "none") {
		setPeriodic(&c.Monitor, false, prime, nonPrime)
		return ""
	}
	monitor, offset := c.Monitor, c.DurationOffset
	for _, w := range strings.Split(v, ",") {
		name, val, hasVal := strings.Cut(w, "=")
		switch strings.ToUpper(name) {
		case "MONITOR":
			on := true
			if hasVal {
				b, err := ParseBool(val)
				if err != nil {
					return "bad MONITOR value " + strconv.Quote(val)
				}
				on = b
			}
			setPeriodic(&monitor, on, prime, nonPrime)
		case "DURATION_OFFSET":
			d, err := ParseTime(val)
			if !hasVal || err != nil {
				return "bad DURATION_OFFSET value " + strconv.Quote(val)
			}
			setPeriodic(&offset, OptDuration{D: d, Set: true}, prime, nonPrime)
		default:
			return "unknown params word " + strconv.Quote(w)
		}
	}
	c.Monitor, c.DurationOffset = monitor, offset
	return ""
}

// ParseBool reads a boolean value: true/false in any capitalisation, or a
// number (non-zero is true).
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	if n, err := parseInt(s); err == nil {
		return n != 0, nil
	}
	return false, fmt.Errorf("bad boolean %q", s)
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", s)
	}
	return n, nil
}

// ParseTime reads a duration written as [[HH:]MM:]SS.
func ParseTime(s string) (time.Duration, error) {
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("bad time %q", s)
	}
	var secs int64
	for _, p := range parts {
		if p == "" {
			return 0, fmt.Errorf("bad time %q", s)
		}
		v, err := strconv.ParseUint(p, 10, 31)
		if err != nil {
			return 0, fmt.Errorf("bad time %q", s)
		}
		secs = secs*60 + int64(v)
	}
	return time.Duration(secs) * time.Second, nil
}
