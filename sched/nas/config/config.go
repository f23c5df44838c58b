// Package config reads the configuration language of the NAS scheduler
// (seed 000): a flat file of "<OPTION> <argument>" statements with '#'
// comments, each option taking an argument of one type (boolean,
// hostname, integer, pathname, queue_spec, real, string, time_spec,
// variance, or a comma-separated list of queue_specs).
//
// Parse collects every syntax error with its line number, option and
// argument; the scheduler does not start while there is one. Check finds
// the common configuration mistakes the seed's "Queue Sanity" checks
// catch before start-up, each with a suggested fix. The meaning of each
// option is documented on the fields of Config and in
// docs/nas-scheduler.md.
package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Type is the type of an option's argument, as the seed names it.
type Type int

// The argument types of the seed.
const (
	Boolean Type = iota
	Hostname
	Integer
	Pathname
	QueueSpecType
	QueueList
	Real
	String
	TimeSpec
	VarianceType
)

var typeNames = [...]string{
	Boolean: "<boolean>", Hostname: "<hostname>", Integer: "<integer>", Pathname: "<pathname>",
	QueueSpecType: "<queue_spec>", QueueList: "<queue_spec>[,<queue_spec>...]", Real: "<real>",
	String: "<string>", TimeSpec: "<time_spec>", VarianceType: "<variance>",
}

func (t Type) String() string {
	if t >= 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// QueueSpec names a queue, and optionally its execution host
// ("queue@exechost"). Host is "" when not given: the seed's default, the
// local host.
type QueueSpec struct {
	Queue string
	Host  string
}

func (q QueueSpec) String() string {
	if q.Host == "" {
		return q.Queue
	}
	return q.Queue + "@" + q.Host
}

// Variance is a negative and a positive deviation from a value, in
// percent ("-10%,+15%" is Minus 10, Plus 15).
type Variance struct {
	Minus, Plus int
}

// Config is the content of a NAS scheduler configuration file. The zero
// value of a field is the option's default when the file does not set it,
// except where Default says otherwise.
type Config struct {
	// AvoidFragmentation applies the fragmentation heuristic before a job
	// is run in a batch queue.
	AvoidFragmentation bool
	// BatchQueues are the execution queues jobs are moved to from the
	// submit queue, tried in this order.
	BatchQueues []QueueSpec
	// DecayFactor multiplies each user's past usage once per day
	// (SORT_BY_PAST_USAGE); default 1 (no decay).
	DecayFactor float64
	// DedicatedQueue is the queue whose jobs run only in dedicated time.
	DedicatedQueue *QueueSpec
	// DedicatedTimeCacheSecs is how long the output of the dedicated
	// time command is reused; 0 runs it every cycle.
	DedicatedTimeCacheSecs int
	// DedicatedTimeCommand is run with SystemName as its only argument
	// and prints the scheduled dedicated times.
	DedicatedTimeCommand string
	// EnforceAllocation keeps jobs of accounts whose allocation is spent
	// from running (allocations in SchedAcctDir).
	EnforceAllocation bool
	// EnforceDedicatedTime honours the dedicated times of the command.
	EnforceDedicatedTime bool
	// EnforcePrimeTime applies the prime-time limits between
	// PrimeTimeStart and PrimeTimeEnd on weekdays.
	EnforcePrimeTime bool
	// ExternalQueues are queues filled by someone else whose jobs are run
	// at the end of each cycle (EXTERNAL_QUEUES, or EXTERN_QUEUES).
	ExternalQueues []QueueSpec
	// FakeMachineMult multiplies the nodes the scheduler believes each
	// host has (testing policy on a small machine); default 1.
	FakeMachineMult int
	// HighSystime is the percentage of system CPU time (the MOMs'
	// "systime" resource) above which no job is started, on average over
	// the hosts or on a batch queue's exechost; 0 disables the check.
	HighSystime int
	// InteractiveLongWait is added to an interactive job's requested
	// walltime to give the time after which it is waiting.
	InteractiveLongWait time.Duration
	// MaxDedicatedJobs is the most jobs run at once in dedicated time;
	// 0 is no limit.
	MaxDedicatedJobs int
	// MaxJobs is the most jobs running at once in the batch queues; 0 is
	// no limit.
	MaxJobs int
	// MaxQueuedTime is the queued time after which a batch job is
	// waiting; 0 disables waiting jobs.
	MaxQueuedTime time.Duration
	// MaxUserRunJobs is the most jobs one user may have running; 0 is no
	// limit.
	MaxUserRunJobs int
	// MinJobs is the number of running jobs below which jobs are started
	// whatever the load.
	MinJobs int
	// NonprimeDrainSys drains the system before prime time starts: no
	// job is started in non-prime time that would still run when prime
	// time begins unless it meets the prime-time limits.
	NonprimeDrainSys bool
	// OADecayFactor multiplies each account's usage against its
	// allocation once per day; default 1 (no decay).
	OADecayFactor float64
	// PrimeTimeEnd is the time of day prime time ends.
	PrimeTimeEnd time.Duration
	// PrimeTimeSmallNodeLimit is the most nodes of a job that is small
	// in prime time.
	PrimeTimeSmallNodeLimit int
	// PrimeTimeSmallWalltLimit is the longest walltime of a small job in
	// prime time.
	PrimeTimeSmallWalltLimit time.Duration
	// PrimeTimeStart is the time of day prime time starts.
	PrimeTimeStart time.Duration
	// PrimeTimeWalltLimit is the longest walltime of any job started in
	// prime time.
	PrimeTimeWalltLimit time.Duration
	// SchedAcctDir holds the allocations file and the usage file.
	SchedAcctDir string
	// SchedHost is the host the scheduler must run on.
	SchedHost string
	// SchedRestartAction is what to do at start-up with jobs left queued
	// in the batch queues: NONE, RESUBMIT or RERUN (default NONE).
	SchedRestartAction string
	// ServerHost is the host of the server; its connections are trusted.
	ServerHost string
	// SmallJobMax is the most nodes of a small job.
	SmallJobMax int
	// SmallQueuedTime divides waiting jobs into short and long waiters
	// for their order.
	SmallQueuedTime time.Duration
	// SortByPastUsage puts jobs of users with less past usage first.
	SortByPastUsage bool
	// SpecialQueue is the queue of high-priority jobs that go first and
	// skip most policy checks.
	SpecialQueue *QueueSpec
	// SubmitQueue is the queue jobs arrive in.
	SubmitQueue *QueueSpec
	// SystemName is the argument of the dedicated time command and the
	// system whose lines of its output count.
	SystemName string
	// TargetLoadPct is the target load of the execution hosts in percent
	// of their CPUs; 0 disables load checks.
	TargetLoadPct int
	// TargetLoadVariance is the band around TargetLoadPct within which
	// the load counts as on target.
	TargetLoadVariance Variance
	// TestOnly logs every decision and changes nothing.
	TestOnly bool
	// WalltLimitLargeJob is the longest walltime of a job larger than
	// SmallJobMax; 0 is no limit.
	WalltLimitLargeJob time.Duration
	// WalltLimitSmallJob is the longest walltime of a job of at most
	// SmallJobMax nodes; 0 is no limit.
	WalltLimitSmallJob time.Duration

	// Set records the line on which the file set each option, by name.
	Set map[string]int
}

// Default returns the configuration of an empty file.
func Default() *Config {
	return &Config{DecayFactor: 1, OADecayFactor: 1, FakeMachineMult: 1, SchedRestartAction: "NONE", Set: map[string]int{}}
}

// option is one recognised option: its argument type and where it goes.
type option struct {
	typ Type
	set func(c *Config, v value)
}

// value is a parsed argument.
type value struct {
	b      bool
	i      int
	f      float64
	s      string
	d      time.Duration
	q      QueueSpec
	queues []QueueSpec
	v      Variance
}

func queuePtr(q QueueSpec) *QueueSpec { return &q }

// options are the seed's complete list, plus EXTERN_QUEUES, the name the
// seed also uses for EXTERNAL_QUEUES.
var options = map[string]option{
	"AVOID_FRAGMENTATION":          {Boolean, func(c *Config, v value) { c.AvoidFragmentation = v.b }},
	"BATCH_QUEUES":                 {QueueList, func(c *Config, v value) { c.BatchQueues = append(c.BatchQueues, v.queues...) }},
	"DECAY_FACTOR":                 {Real, func(c *Config, v value) { c.DecayFactor = v.f }},
	"DEDICATED_QUEUE":              {QueueSpecType, func(c *Config, v value) { c.DedicatedQueue = queuePtr(v.q) }},
	"DEDICATED_TIME_CACHE_SECS":    {Integer, func(c *Config, v value) { c.DedicatedTimeCacheSecs = v.i }},
	"DEDICATED_TIME_COMMAND":       {Pathname, func(c *Config, v value) { c.DedicatedTimeCommand = v.s }},
	"ENFORCE_ALLOCATION":           {Boolean, func(c *Config, v value) { c.EnforceAllocation = v.b }},
	"ENFORCE_DEDICATED_TIME":       {Boolean, func(c *Config, v value) { c.EnforceDedicatedTime = v.b }},
	"ENFORCE_PRIME_TIME":           {Boolean, func(c *Config, v value) { c.EnforcePrimeTime = v.b }},
	"EXTERNAL_QUEUES":              {QueueList, func(c *Config, v value) { c.ExternalQueues = append(c.ExternalQueues, v.queues...) }},
	"EXTERN_QUEUES":                {QueueList, func(c *Config, v value) { c.ExternalQueues = append(c.ExternalQueues, v.queues...) }},
	"FAKE_MACHINE_MULT":            {Integer, func(c *Config, v value) { c.FakeMachineMult = v.i }},
	"HIGH_SYSTIME":                 {Integer, func(c *Config, v value) { c.HighSystime = v.i }},
	"INTERACTIVE_LONG_WAIT":        {TimeSpec, func(c *Config, v value) { c.InteractiveLongWait = v.d }},
	"MAX_DEDICATED_JOBS":           {Integer, func(c *Config, v value) { c.MaxDedicatedJobs = v.i }},
	"MAX_JOBS":                     {Integer, func(c *Config, v value) { c.MaxJobs = v.i }},
	"MAX_QUEUED_TIME":              {TimeSpec, func(c *Config, v value) { c.MaxQueuedTime = v.d }},
	"MAX_USER_RUN_JOBS":            {Integer, func(c *Config, v value) { c.MaxUserRunJobs = v.i }},
	"MIN_JOBS":                     {Integer, func(c *Config, v value) { c.MinJobs = v.i }},
	"NONPRIME_DRAIN_SYS":           {Boolean, func(c *Config, v value) { c.NonprimeDrainSys = v.b }},
	"OA_DECAY_FACTOR":              {Real, func(c *Config, v value) { c.OADecayFactor = v.f }},
	"PRIME_TIME_END":               {TimeSpec, func(c *Config, v value) { c.PrimeTimeEnd = v.d }},
	"PRIME_TIME_SMALL_NODE_LIMIT":  {Integer, func(c *Config, v value) { c.PrimeTimeSmallNodeLimit = v.i }},
	"PRIME_TIME_SMALL_WALLT_LIMIT": {TimeSpec, func(c *Config, v value) { c.PrimeTimeSmallWalltLimit = v.d }},
	"PRIME_TIME_START":             {TimeSpec, func(c *Config, v value) { c.PrimeTimeStart = v.d }},
	"PRIME_TIME_WALLT_LIMIT":       {TimeSpec, func(c *Config, v value) { c.PrimeTimeWalltLimit = v.d }},
	"SCHED_ACCT_DIR":               {Pathname, func(c *Config, v value) { c.SchedAcctDir = v.s }},
	"SCHED_HOST":                   {Hostname, func(c *Config, v value) { c.SchedHost = v.s }},
	"SCHED_RESTART_ACTION":         {String, func(c *Config, v value) { c.SchedRestartAction = strings.ToUpper(v.s) }},
	"SERVER_HOST":                  {Hostname, func(c *Config, v value) { c.ServerHost = v.s }},
	"SMALL_JOB_MAX":                {Integer, func(c *Config, v value) { c.SmallJobMax = v.i }},
	"SMALL_QUEUED_TIME":            {TimeSpec, func(c *Config, v value) { c.SmallQueuedTime = v.d }},
	"SORT_BY_PAST_USAGE":           {Boolean, func(c *Config, v value) { c.SortByPastUsage = v.b }},
	"SPECIAL_QUEUE":                {QueueSpecType, func(c *Config, v value) { c.SpecialQueue = queuePtr(v.q) }},
	"SUBMIT_QUEUE":                 {QueueSpecType, func(c *Config, v value) { c.SubmitQueue = queuePtr(v.q) }},
	"SYSTEM_NAME":                  {Hostname, func(c *Config, v value) { c.SystemName = v.s }},
	"TARGET_LOAD_PCT":              {Integer, func(c *Config, v value) { c.TargetLoadPct = v.i }},
	"TARGET_LOAD_VARIANCE":         {VarianceType, func(c *Config, v value) { c.TargetLoadVariance = v.v }},
	"TEST_ONLY":                    {Boolean, func(c *Config, v value) { c.TestOnly = v.b }},
	"WALLT_LIMIT_LARGE_JOB":        {TimeSpec, func(c *Config, v value) { c.WalltLimitLargeJob = v.d }},
	"WALLT_LIMIT_SMALL_JOB":        {TimeSpec, func(c *Config, v value) { c.WalltLimitSmallJob = v.d }},
}

// Options returns the names of the recognised options, sorted.
func Options() []string {
	names := make([]string, 0, len(options))
	for n := range options {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// OptionType returns the argument type of option name.
func OptionType(name string) (Type, bool) {
	o, ok := options[name]
	return o.typ, ok
}

// IsOption reports whether word is a recognised option name; the
// scheduler uses it to tell a NAS configuration from a FIFO sched_config.
func IsOption(word string) bool {
	_, ok := options[word]
	return ok
}

// LooksLikeNAS reports whether the text of a configuration file is in
// the NAS form: its first statement starts with one of the options
// (upper case, no ':'), which no FIFO sched_config statement does.
func LooksLikeNAS(r io.Reader) bool {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if f := strings.Fields(line); len(f) > 0 {
			return IsOption(f[0])
		}
	}
	return false
}

// LineError is a syntax error: the line, the option and argument (when
// known) and what is wrong.
type LineError struct {
	File   string
	Line   int
	Option string
	Arg    string
	Reason string
}

func (e *LineError) Error() string {
	s := fmt.Sprintf("%s line %d: ", e.File, e.Line)
	if e.Option != "" {
		s += e.Option + ": "
	}
	if e.Arg != "" {
		s += strconv.Quote(e.Arg) + ": "
	}
	return s + e.Reason
}

// SyntaxErrors are all the syntax errors of a file.
type SyntaxErrors []*LineError

func (e SyntaxErrors) Error() string {
	msgs := make([]string, len(e))
	for i, le := range e {
		msgs[i] = le.Error()
	}
	return strings.Join(msgs, "; ")
}

// ReadFile parses the file at path.
func ReadFile(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read NAS scheduler configuration: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// maxLine is the longest statement accepted.
const maxLine = 64 << 10

// Parse reads a configuration from r; name is used in error messages. A
// file with syntax errors returns them all as SyntaxErrors (and no
// Config).
func Parse(r io.Reader, name string) (*Config, error) {
	c := Default()
	var errs SyntaxErrors
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if e := c.statement(line, n); e != nil {
			e.File, e.Line = name, n
			errs = append(errs, e)
			continue
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			errs = append(errs, &LineError{File: name, Line: n + 1, Reason: "line too long"})
		} else {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

// statement applies one "<option> <argument>" statement of line n; line
// has no comment and no surrounding blanks.
func (c *Config) statement(line string, n int) *LineError {
	name, arg, _ := strings.Cut(strings.ReplaceAll(line, "\t", " "), " ")
	arg = strings.TrimSpace(arg)
	opt, ok := options[name]
	if !ok {
		if _, ok := options[strings.ToUpper(name)]; ok {
			return &LineError{Option: name, Reason: "option names are upper case: " + strings.ToUpper(name)}
		}
		return &LineError{Option: name, Reason: "unknown option"}
	}
	if arg == "" {
		return &LineError{Option: name, Reason: "missing argument " + opt.typ.String()}
	}
	v, reason := parseValue(opt.typ, arg)
	if reason != "" {
		return &LineError{Option: name, Arg: arg, Reason: reason}
	}
	if prev, dup := c.Set[name]; dup && opt.typ != QueueList {
		return &LineError{Option: name, Arg: arg, Reason: fmt.Sprintf("option already set on line %d", prev)}
	}
	c.Set[name] = n
	opt.set(c, v)
	return nil
}

// parseValue parses arg as type t; it returns what is wrong, or "".
func parseValue(t Type, arg string) (v value, reason string) {
	single := func() bool { return !strings.ContainsAny(arg, " \t") }
	switch t {
	case Boolean:
		if !single() {
			return v, "expected one word " + t.String()
		}
		switch strings.ToLower(arg) {
		case "true", "yes", "on", "1":
			v.b = true
		}
	case Integer:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return v, "expected a non-negative decimal integer"
		}
		v.i = n
	case Real:
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(arg, "xXpP_") {
			return v, "expected a real number such as 0.80"
		}
		v.f = f
	case TimeSpec:
		d, ok := ParseTimeSpec(arg)
		if !ok {
			return v, "expected a time HH:MM:SS"
		}
		v.d = d
	case VarianceType:
		vr, ok := ParseVariance(arg)
		if !ok {
			return v, "expected a variance -mm%,+nn%"
		}
		v.v = vr
	case Hostname:
		if !validHost(arg) {
			return v, "expected a host name"
		}
		v.s = arg
	case QueueSpecType:
		q, ok := ParseQueueSpec(arg)
		if !ok {
			return v, "expected a queue name or queue@exechost"
		}
		v.q = q
	case QueueList:
		for _, e := range strings.Split(arg, ",") {
			q, ok := ParseQueueSpec(strings.TrimSpace(e))
			if !ok {
				return v, "expected queue names or queue@exechost separated by commas"
			}
			v.queues = append(v.queues, q)
		}
	case Pathname:
		if !single() || strings.ContainsRune(arg, 0) {
			return v, "expected one path name"
		}
		v.s = arg
	case String:
		v.s = arg
	}
	return v, ""
}

// ParseTimeSpec reads HH:MM:SS (hours of any number of digits, minutes
// and seconds below 60).
func ParseTimeSpec(s string) (time.Duration, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, false
	}
	var n [3]int
	for i, p := range parts {
		if p == "" || len(p) > 6 || strings.Trim(p, "0123456789") != "" {
			return 0, false
		}
		n[i], _ = strconv.Atoi(p)
		if i > 0 && (len(p) != 2 || n[i] > 59) {
			return 0, false
		}
	}
	return time.Duration(n[0])*time.Hour + time.Duration(n[1])*time.Minute + time.Duration(n[2])*time.Second, true
}

// ParseVariance reads "-mm%,+nn%".
func ParseVariance(s string) (Variance, bool) {
	minus, plus, ok := strings.Cut(s, ",")
	if !ok {
		return Variance{}, false
	}
	pct := func(p string, sign byte) (int, bool) {
		if len(p) < 3 || p[0] != sign || p[len(p)-1] != '%' {
			return 0, false
		}
		digits := p[1 : len(p)-1]
		if len(digits) > 3 || strings.Trim(digits, "0123456789") != "" {
			return 0, false
		}
		n, _ := strconv.Atoi(digits)
		return n, true
	}
	m, ok1 := pct(minus, '-')
	p, ok2 := pct(plus, '+')
	if !ok1 || !ok2 || m > 100 {
		return Variance{}, false
	}
	return Variance{Minus: m, Plus: p}, true
}

// ParseQueueSpec reads "queue" or "queue@exechost".
func ParseQueueSpec(s string) (QueueSpec, bool) {
	q, host, hasHost := strings.Cut(s, "@")
	if !validQueue(q) || (hasHost && !validHost(host)) {
		return QueueSpec{}, false
	}
	return QueueSpec{Queue: q, Host: host}, true
}

// validQueue reports whether s is a PBS queue name: a letter, then
// letters, digits, '_', '-' or '.', at most 15 characters.
func validQueue(s string) bool {
	if s == "" || len(s) > 15 || !isLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if ch := s[i]; !isLetter(ch) && !isDigit(ch) && ch != '_' && ch != '-' && ch != '.' {
			return false
		}
	}
	return true
}

// validHost reports whether s is a syntactically valid host name (labels
// of letters, digits, '-' and '_' separated by dots) or IP address.
func validHost(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if ch := label[i]; !isLetter(ch) && !isDigit(ch) && ch != '-' && ch != '_' {
				return false
			}
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
