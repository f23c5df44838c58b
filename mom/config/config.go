// Package config parses pbs_mom's configuration file (PBS_HOME/mom_priv/config)
// as TORQUE 2.5.13 defines it: "$keyword value" directives, "name value"
// static resources, "name !command" shell-escape resources, and "#" comments.
//
// Parse never fails on unknown directives or bad values: they are collected in
// Config.Warnings (pbs_mom logs and ignores them).
package config

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// Default values of the directives.
const (
	DefaultStatusUpdateTime  = 45 * time.Second
	DefaultCheckPollTime     = 45 * time.Second
	DefaultJobStartBlockTime = 5 * time.Second
	DefaultPrologAlarm       = 300 * time.Second
	DefaultTimeout           = 20 * time.Second // what the reference MOM reports with no $timeout line (capture 23); spec 11 §2 says 60, the capture wins
	DefaultMaxConnTimeout    = 10000 * time.Microsecond
	DefaultLogEvent          = 0x1ff
	DefaultOutputUmask       = 0o077
	DefaultRcpCmd            = "scp"
	DefaultRcpArgs           = "-rpB"
	DefaultExtPwdRetry       = 3
)

// Ways of enforcing the mem/pmem limits ($enforce mem) and the vmem/pvmem
// limits ($enforce vmem).
const (
	// EnforceAuto (mem only, the default): the kernel's memory.max in
	// the job's cgroup where job cgroups have the memory controller,
	// else EnforcePoll.
	EnforceAuto = "auto"
	// EnforceCgroup asks for memory.max; without a usable memory
	// controller pbs_mom logs it and polls.
	EnforceCgroup = "cgroup"
	// EnforcePoll (the default for vmem): each poll measures the job and
	// kills it when over its limit.
	EnforcePoll = "poll"
	// EnforceOff is TORQUE 2.5.13's behaviour: the limits are only
	// setrlimit values at the start (mem, pmem: RLIMIT_DATA and
	// RLIMIT_RSS; vmem, pvmem: RLIMIT_AS), so allocations fail instead
	// of the job being killed.
	EnforceOff = "off"
)

// CgroupRootOff as $cgroup_root makes pbs_mom run jobs without cgroups.
const CgroupRootOff = "off"

// UseCp is one $usecp rule: destinations on hosts matching HostPattern whose
// path starts with From are local paths with From replaced by To.
type UseCp struct {
	HostPattern string
	From        string
	To          string
}

// Resource is a static ("name value") or shell-escape ("name !command")
// resource line.
type Resource struct {
	Name    string
	Value   string // the value, or the command for a shell escape
	Command bool   // value was given as "!command"
}

// VarAttr is a $varattr entry.
type VarAttr struct {
	TTL     int // seconds; -1 = run once
	Command string
}

// Config is the parsed configuration. The zero value is not meaningful; use
// Default or Parse.
type Config struct {
	PBSServers       []string // $pbsserver / $clienthost, "host[:port]"
	PBSClients       []string // $pbsclient
	Restricted       []string // $restricted host patterns
	LogEvent         int
	LogLevel         int
	LogDirectory     string
	LogFileSuffix    string
	LogFileMaxSize   int64 // kilobytes, 0 = unlimited
	LogFileRollDepth int
	LogKeepDays      int

	StatusUpdateTime  time.Duration
	CheckPollTime     time.Duration
	JobStartBlockTime time.Duration
	PrologAlarm       time.Duration
	Timeout           time.Duration
	MaxConnTimeout    time.Duration

	UseCp            []UseCp
	RcpCmd           string
	RcpArgs          string
	TmpDir           string
	NodefileSuffix   string
	NospoolDirList   []string
	SpoolAsFinalName bool
	// OutputUmask is the umask for spool files; -1 means "userdefault".
	OutputUmask            int
	SourceLoginBatch       bool
	SourceLoginInteractive bool
	PreExec                string
	ExecWithExec           bool
	JobStarter             string
	AttemptToMakeDir       bool

	CputMult    float64
	WallMult    float64
	IgnWalltime bool
	IgnCput     bool
	IgnMem      bool
	IgnVmem     bool
	// EnforceMem and EnforceVmem are the $enforce mem and $enforce vmem
	// modes (EnforceAuto, EnforceCgroup, EnforcePoll, EnforceOff).
	EnforceMem  string
	EnforceVmem string
	// CgroupRoot is $cgroup_root: the directory of the cgroup v2
	// hierarchy under which each job gets a cgroup; "" is the
	// hierarchy's pbs_mom directory, CgroupRootOff none.
	CgroupRoot string

	MaxLoad       float64 // <0 = unset
	IdealLoad     float64 // <0 = unset
	AutoMaxLoad   string
	AutoIdealLoad string

	NodeCheckScript     string
	NodeCheckInterval   int
	NodeCheckOnJobStart bool
	NodeCheckOnJobEnd   bool
	DownOnError         bool

	EnableMomRestart     bool
	RemoteReconfig       bool
	VarAttrs             []VarAttr
	ConfigVersion        string
	MomHost              string
	HTTPAddress          string // $http_address (GoPBS): the metrics listener
	AliasServerName      string
	CheckpointScript     string
	RestartScript        string
	CheckpointRunExe     string
	CheckpointInterval   int
	RemoteCheckpointDirs []string
	XauthPath            string
	AllocParCmd          string
	RPPThrottle          time.Duration
	ThreadUnlinkCalls    bool
	ReducePrologChecks   bool
	ExtPwdRetry          int
	JobOOMScoreAdjust    int
	MomOOMImmunize       bool

	// Resources holds static and shell-escape resources in file order.
	Resources []Resource
	// SizeFS lists the file systems of "size[fs=/path]" entries.
	SizeFS []string
	// Warnings lists lines that were ignored, with the reason.
	Warnings []string
}

// Default returns a Config with every directive at its default.
func Default() *Config {
	return &Config{
		LogEvent:               DefaultLogEvent,
		LogFileRollDepth:       1,
		StatusUpdateTime:       DefaultStatusUpdateTime,
		CheckPollTime:          DefaultCheckPollTime,
		JobStartBlockTime:      DefaultJobStartBlockTime,
		PrologAlarm:            DefaultPrologAlarm,
		Timeout:                DefaultTimeout,
		MaxConnTimeout:         DefaultMaxConnTimeout,
		RcpCmd:                 DefaultRcpCmd,
		RcpArgs:                DefaultRcpArgs,
		OutputUmask:            DefaultOutputUmask,
		SourceLoginBatch:       true,
		SourceLoginInteractive: true,
		CputMult:               1,
		WallMult:               1,
		EnforceMem:             EnforceAuto,
		EnforceVmem:            EnforcePoll,
		MaxLoad:                -1,
		IdealLoad:              -1,
		NodeCheckInterval:      1,
		ExtPwdRetry:            DefaultExtPwdRetry,
	}
}

// ParseFile reads and parses a configuration file.
func ParseFile(name string) (*Config, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("mom config: %w", err)
	}
	defer f.Close()
	c, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("mom config %s: %w", name, err)
	}
	return c, nil
}

// Parse parses a configuration. Only read errors are returned; bad lines are
// recorded in Warnings.
func Parse(r io.Reader) (*Config, error) {
	c := Default()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, value := splitFirst(line)
		if strings.HasPrefix(name, "$") {
			if err := c.directive(strings.ToLower(name[1:]), value); err != nil {
				c.Warnings = append(c.Warnings, fmt.Sprintf("line %d: %s: %v", lineNo, name, err))
			}
			continue
		}
		if strings.HasPrefix(name, "size[") {
			fs := strings.TrimSuffix(strings.TrimPrefix(name, "size["), "]")
			if v, ok := strings.CutPrefix(fs, "fs="); ok {
				c.SizeFS = append(c.SizeFS, v)
				continue
			}
		}
		res := Resource{Name: name, Value: value}
		if strings.HasPrefix(value, "!") {
			res.Command = true
			res.Value = strings.TrimSpace(value[1:])
		}
		c.Resources = append(c.Resources, res)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if c.MaxLoad >= 0 && c.IdealLoad < 0 {
		c.IdealLoad = c.MaxLoad
	}
	if c.IdealLoad >= 0 && c.MaxLoad < 0 {
		c.MaxLoad = c.IdealLoad
	}
	return c, nil
}

// StaticResource returns the value of a static (non-command) resource.
func (c *Config) StaticResource(name string) (string, bool) {
	for _, r := range c.Resources {
		if r.Name == name && !r.Command {
			return r.Value, true
		}
	}
	return "", false
}

func splitFirst(s string) (string, string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i+1:])
}

// ParseBool parses a TORQUE boolean: values starting with t, T, y, Y, 1 or
// "on" are true, everything else false.
func ParseBool(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	switch s[0] {
	case 't', 'T', 'y', 'Y', '1':
		return true
	}
	return strings.EqualFold(s, "on")
}

func parseSeconds(v string, min int) (time.Duration, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("bad value %q", v)
	}
	if n < min {
		return 0, fmt.Errorf("value %d below minimum %d", n, min)
	}
	return time.Duration(n) * time.Second, nil
}

func parseInt(v string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("bad integer %q", v)
	}
	return int(n), nil
}

func parseFloat(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", v)
	}
	return f, nil
}

// directive applies one "$keyword value" line.
func (c *Config) directive(key, v string) error {
	var err error
	switch key {
	case "pbsserver", "clienthost":
		if v == "" {
			return fmt.Errorf("missing host")
		}
		if len(c.PBSServers) >= 4 {
			return fmt.Errorf("too many servers")
		}
		c.PBSServers = append(c.PBSServers, v)
	case "pbsclient":
		c.PBSClients = append(c.PBSClients, strings.Fields(v)...)
	case "restricted":
		c.Restricted = append(c.Restricted, strings.Fields(v)...)
	case "logevent":
		c.LogEvent, err = parseInt(v)
	case "loglevel":
		c.LogLevel, err = parseInt(v)
	case "log_directory":
		c.LogDirectory = v
	case "log_file_suffix":
		c.LogFileSuffix = v
	case "log_file_max_size":
		var n int
		n, err = parseInt(v)
		c.LogFileMaxSize = int64(n)
	case "log_file_roll_depth":
		c.LogFileRollDepth, err = parseInt(v)
		if err == nil && c.LogFileRollDepth < 1 {
			c.LogFileRollDepth, err = 1, fmt.Errorf("roll depth must be >= 1")
		}
	case "log_keep_days":
		c.LogKeepDays, err = parseInt(v)
	case "status_update_time":
		c.StatusUpdateTime, err = setDur(c.StatusUpdateTime, v, 1)
	case "check_poll_time":
		c.CheckPollTime, err = setDur(c.CheckPollTime, v, 1)
	case "jobstartblocktime":
		c.JobStartBlockTime, err = setDur(c.JobStartBlockTime, v, 0)
	case "prologalarm":
		c.PrologAlarm, err = setDur(c.PrologAlarm, v, 1)
	case "timeout":
		c.Timeout, err = setDur(c.Timeout, v, 1)
	case "max_conn_timeout_micro_sec":
		var n int
		if n, err = parseInt(v); err == nil {
			c.MaxConnTimeout = time.Duration(n) * time.Microsecond
		}
	case "usecp":
		var u UseCp
		if u, err = parseUseCp(v); err == nil {
			c.UseCp = append(c.UseCp, u)
		}
	case "rcpcmd", "rcp_cmd":
		cmd, args := splitFirst(v)
		if cmd == "" {
			return fmt.Errorf("missing command")
		}
		c.RcpCmd, c.RcpArgs = cmd, args
	case "tmpdir":
		if !path.IsAbs(v) {
			return fmt.Errorf("tmpdir %q is not absolute", v)
		}
		c.TmpDir = v
	case "nodefile_suffix":
		c.NodefileSuffix = v
	case "nospool_dir_list":
		c.NospoolDirList = append(c.NospoolDirList, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
	case "spool_as_final_name":
		c.SpoolAsFinalName = ParseBool(v)
	case "job_output_file_umask":
		if strings.EqualFold(v, "userdefault") {
			c.OutputUmask = -1
			break
		}
		var n uint64
		if n, err = strconv.ParseUint(v, 8, 32); err != nil {
			err = fmt.Errorf("bad umask %q", v)
		} else {
			c.OutputUmask = int(n)
		}
	case "source_login_batch":
		c.SourceLoginBatch = ParseBool(v)
	case "source_login_interactive":
		c.SourceLoginInteractive = ParseBool(v)
	case "preexec":
		c.PreExec = v
	case "exec_with_exec":
		c.ExecWithExec = ParseBool(v)
	case "job_starter":
		c.JobStarter = v
	case "attempt_to_make_dir":
		c.AttemptToMakeDir = ParseBool(v)
	case "cputmult":
		c.CputMult, err = setPositive(c.CputMult, v)
	case "wallmult":
		c.WallMult, err = setPositive(c.WallMult, v)
	case "ignwalltime":
		c.IgnWalltime = ParseBool(v)
	case "igncput":
		c.IgnCput = ParseBool(v)
	case "ignmem":
		c.IgnMem = ParseBool(v)
	case "ignvmem":
		c.IgnVmem = ParseBool(v)
	case "enforce":
		err = c.enforce(v)
	case "cgroup_root":
		if v != CgroupRootOff && !path.IsAbs(v) {
			return fmt.Errorf("cgroup_root %q is neither absolute nor %q", v, CgroupRootOff)
		}
		c.CgroupRoot = v
	case "max_load":
		c.MaxLoad, err = parseFloat(v)
	case "ideal_load":
		c.IdealLoad, err = parseFloat(v)
	case "auto_max_load":
		c.AutoMaxLoad = v
	case "auto_ideal_load":
		c.AutoIdealLoad = v
	case "node_check_script":
		c.NodeCheckScript = v
	case "node_check_interval":
		err = c.nodeCheckInterval(v)
	case "down_on_error":
		c.DownOnError = ParseBool(v)
	case "enablemomrestart":
		c.EnableMomRestart = ParseBool(v)
	case "remote_reconfig":
		c.RemoteReconfig = ParseBool(v)
	case "varattr":
		ttl, cmd := splitFirst(v)
		var n int
		if n, err = parseInt(ttl); err == nil {
			if cmd == "" {
				return fmt.Errorf("missing command")
			}
			c.VarAttrs = append(c.VarAttrs, VarAttr{TTL: n, Command: cmd})
		}
	case "configversion":
		c.ConfigVersion = v
	case "mom_host":
		c.MomHost = v
	case "http_address":
		c.HTTPAddress = v
	case "alias_server_name":
		c.AliasServerName = v
	case "checkpoint_script":
		c.CheckpointScript = v
	case "restart_script":
		c.RestartScript = v
	case "checkpoint_run_exe":
		c.CheckpointRunExe = v
	case "checkpoint_interval":
		c.CheckpointInterval, err = parseInt(v)
	case "remote_checkpoint_dirs":
		c.RemoteCheckpointDirs = append(c.RemoteCheckpointDirs, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })...)
	case "xauthpath":
		c.XauthPath = v
	case "alloc_par_cmd":
		c.AllocParCmd = v
	case "rpp_throttle":
		var n int
		if n, err = parseInt(v); err == nil {
			c.RPPThrottle = time.Duration(n) * time.Microsecond
		}
	case "thread_unlink_calls":
		c.ThreadUnlinkCalls = ParseBool(v)
	case "reduce_prolog_checks":
		c.ReducePrologChecks = ParseBool(v)
	case "ext_pwd_retry":
		c.ExtPwdRetry, err = parseInt(v)
	case "job_oom_score_adjust":
		c.JobOOMScoreAdjust, err = parseInt(v)
	case "mom_oom_immunize":
		c.MomOOMImmunize = ParseBool(v)
	default:
		return fmt.Errorf("unknown directive")
	}
	return err
}

// enforce applies "$enforce mem|vmem <mode>".
func (c *Config) enforce(v string) error {
	what, mode := splitFirst(v)
	mode = strings.ToLower(mode)
	switch what {
	case "mem":
		switch mode {
		case EnforceAuto, EnforceCgroup, EnforcePoll, EnforceOff:
			c.EnforceMem = mode
			return nil
		}
		return fmt.Errorf("mem: mode %q is not auto, cgroup, poll or off", mode)
	case "vmem":
		switch mode {
		case EnforcePoll, EnforceOff:
			c.EnforceVmem = mode
			return nil
		}
		return fmt.Errorf("vmem: mode %q is not poll or off", mode)
	}
	return fmt.Errorf("cannot enforce %q (mem or vmem)", what)
}

func setDur(old time.Duration, v string, min int) (time.Duration, error) {
	d, err := parseSeconds(v, min)
	if err != nil {
		return old, err
	}
	return d, nil
}

func setPositive(old float64, v string) (float64, error) {
	f, err := parseFloat(v)
	if err != nil {
		return old, err
	}
	if f <= 0 {
		return old, fmt.Errorf("value must be > 0")
	}
	return f, nil
}

func (c *Config) nodeCheckInterval(v string) error {
	for i, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "jobstart":
			c.NodeCheckOnJobStart = true
		case part == "jobend":
			c.NodeCheckOnJobEnd = true
		case i == 0:
			n, err := parseInt(part)
			if err != nil || n < 1 {
				return fmt.Errorf("bad interval %q", part)
			}
			c.NodeCheckInterval = n
		default:
			return fmt.Errorf("bad interval option %q", part)
		}
	}
	return nil
}

// parseUseCp parses "hostpattern:/from /to".
func parseUseCp(v string) (UseCp, error) {
	f := strings.Fields(v)
	if len(f) != 2 {
		return UseCp{}, fmt.Errorf("want 'host:/from /to', got %q", v)
	}
	host, from, ok := strings.Cut(f[0], ":")
	if !ok || host == "" || from == "" {
		return UseCp{}, fmt.Errorf("want 'host:/from /to', got %q", v)
	}
	return UseCp{HostPattern: host, From: from, To: f[1]}, nil
}
