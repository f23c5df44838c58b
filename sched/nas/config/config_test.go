package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// seedOptions is the seed's complete list of options with their types.
var seedOptions = map[string]Type{
	"AVOID_FRAGMENTATION": Boolean, "BATCH_QUEUES": QueueList, "DECAY_FACTOR": Real,
	"DEDICATED_QUEUE": QueueSpecType, "DEDICATED_TIME_CACHE_SECS": Integer, "DEDICATED_TIME_COMMAND": Pathname,
	"ENFORCE_ALLOCATION": Boolean, "ENFORCE_DEDICATED_TIME": Boolean, "ENFORCE_PRIME_TIME": Boolean,
	"EXTERNAL_QUEUES": QueueList, "FAKE_MACHINE_MULT": Integer, "HIGH_SYSTIME": Integer,
	"INTERACTIVE_LONG_WAIT": TimeSpec, "MAX_DEDICATED_JOBS": Integer, "MAX_JOBS": Integer,
	"MAX_QUEUED_TIME": TimeSpec, "MAX_USER_RUN_JOBS": Integer, "MIN_JOBS": Integer,
	"NONPRIME_DRAIN_SYS": Boolean, "OA_DECAY_FACTOR": Real, "PRIME_TIME_END": TimeSpec,
	"PRIME_TIME_SMALL_NODE_LIMIT": Integer, "PRIME_TIME_SMALL_WALLT_LIMIT": TimeSpec, "PRIME_TIME_START": TimeSpec,
	"PRIME_TIME_WALLT_LIMIT": TimeSpec, "SCHED_ACCT_DIR": Pathname, "SCHED_HOST": Hostname,
	"SCHED_RESTART_ACTION": String, "SERVER_HOST": Hostname, "SMALL_JOB_MAX": Integer,
	"SMALL_QUEUED_TIME": TimeSpec, "SORT_BY_PAST_USAGE": Boolean, "SPECIAL_QUEUE": QueueSpecType,
	"SUBMIT_QUEUE": QueueSpecType, "SYSTEM_NAME": Hostname, "TARGET_LOAD_PCT": Integer,
	"TARGET_LOAD_VARIANCE": VarianceType, "TEST_ONLY": Boolean, "WALLT_LIMIT_LARGE_JOB": TimeSpec,
	"WALLT_LIMIT_SMALL_JOB": TimeSpec,
}

func TestEveryOptionOfTheSeed(t *testing.T) {
	if len(seedOptions) != 40 {
		t.Fatalf("the seed lists 40 options, table has %d", len(seedOptions))
	}
	for name, typ := range seedOptions {
		got, ok := OptionType(name)
		if !ok || got != typ {
			t.Errorf("%s: type %v %v, want %v", name, got, ok, typ)
		}
	}
	// EXTERN_QUEUES is the seed's other name for EXTERNAL_QUEUES.
	if typ, ok := OptionType("EXTERN_QUEUES"); !ok || typ != QueueList {
		t.Error("EXTERN_QUEUES not accepted")
	}
	if n := len(Options()); n != 41 {
		t.Errorf("%d options, want 41", n)
	}
}

func mustParse(t *testing.T, text string) *Config {
	t.Helper()
	c, err := Parse(strings.NewReader(text), "config")
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return c
}

func q(name, host string) QueueSpec { return QueueSpec{Queue: name, Host: host} }

// TestOptions sets every option and checks the field it lands in.
func TestOptions(t *testing.T) {
	h := time.Hour
	tests := []struct {
		line string
		get  func(c *Config) any
		want any
	}{
		{"AVOID_FRAGMENTATION true", func(c *Config) any { return c.AvoidFragmentation }, true},
		{"BATCH_QUEUES small,large@hopper", func(c *Config) any { return c.BatchQueues }, []QueueSpec{q("small", ""), q("large", "hopper")}},
		{"BATCH_QUEUES a, b", func(c *Config) any { return c.BatchQueues }, []QueueSpec{q("a", ""), q("b", "")}},
		{"DECAY_FACTOR 0.80", func(c *Config) any { return c.DecayFactor }, 0.8},
		{"DEDICATED_QUEUE ded@piglet", func(c *Config) any { return *c.DedicatedQueue }, q("ded", "piglet")},
		{"DEDICATED_TIME_CACHE_SECS 300", func(c *Config) any { return c.DedicatedTimeCacheSecs }, 300},
		{"DEDICATED_TIME_COMMAND /usr/local/bin/schedule", func(c *Config) any { return c.DedicatedTimeCommand }, "/usr/local/bin/schedule"},
		{"ENFORCE_ALLOCATION yes", func(c *Config) any { return c.EnforceAllocation }, true},
		{"ENFORCE_DEDICATED_TIME on", func(c *Config) any { return c.EnforceDedicatedTime }, true},
		{"ENFORCE_PRIME_TIME 1", func(c *Config) any { return c.EnforcePrimeTime }, true},
		{"EXTERNAL_QUEUES meta", func(c *Config) any { return c.ExternalQueues }, []QueueSpec{q("meta", "")}},
		{"EXTERN_QUEUES meta@turing", func(c *Config) any { return c.ExternalQueues }, []QueueSpec{q("meta", "turing")}},
		{"FAKE_MACHINE_MULT 4", func(c *Config) any { return c.FakeMachineMult }, 4},
		{"HIGH_SYSTIME 30", func(c *Config) any { return c.HighSystime }, 30},
		{"INTERACTIVE_LONG_WAIT 00:30:00", func(c *Config) any { return c.InteractiveLongWait }, 30 * time.Minute},
		{"MAX_DEDICATED_JOBS 2", func(c *Config) any { return c.MaxDedicatedJobs }, 2},
		{"MAX_JOBS 40", func(c *Config) any { return c.MaxJobs }, 40},
		{"MAX_QUEUED_TIME 24:00:00", func(c *Config) any { return c.MaxQueuedTime }, 24 * h},
		{"MAX_USER_RUN_JOBS 3", func(c *Config) any { return c.MaxUserRunJobs }, 3},
		{"MIN_JOBS 2", func(c *Config) any { return c.MinJobs }, 2},
		{"NONPRIME_DRAIN_SYS true", func(c *Config) any { return c.NonprimeDrainSys }, true},
		{"OA_DECAY_FACTOR 0.5", func(c *Config) any { return c.OADecayFactor }, 0.5},
		{"PRIME_TIME_END 17:30:00", func(c *Config) any { return c.PrimeTimeEnd }, 17*h + 30*time.Minute},
		{"PRIME_TIME_SMALL_NODE_LIMIT 8", func(c *Config) any { return c.PrimeTimeSmallNodeLimit }, 8},
		{"PRIME_TIME_SMALL_WALLT_LIMIT 0:20:00", func(c *Config) any { return c.PrimeTimeSmallWalltLimit }, 20 * time.Minute},
		{"PRIME_TIME_START 4:00:00", func(c *Config) any { return c.PrimeTimeStart }, 4 * h},
		{"PRIME_TIME_WALLT_LIMIT 02:00:00", func(c *Config) any { return c.PrimeTimeWalltLimit }, 2 * h},
		{"SCHED_ACCT_DIR /usr/local/pbs/pbs_acctdir", func(c *Config) any { return c.SchedAcctDir }, "/usr/local/pbs/pbs_acctdir"},
		{"SCHED_HOST front-end.nas.nasa.gov", func(c *Config) any { return c.SchedHost }, "front-end.nas.nasa.gov"},
		{"SCHED_RESTART_ACTION resubmit", func(c *Config) any { return c.SchedRestartAction }, "RESUBMIT"},
		{"SERVER_HOST 192.0.2.7", func(c *Config) any { return c.ServerHost }, "192.0.2.7"},
		{"SMALL_JOB_MAX 4", func(c *Config) any { return c.SmallJobMax }, 4},
		{"SMALL_QUEUED_TIME 02:00:00", func(c *Config) any { return c.SmallQueuedTime }, 2 * h},
		{"SORT_BY_PAST_USAGE TRUE", func(c *Config) any { return c.SortByPastUsage }, true},
		{"SPECIAL_QUEUE special", func(c *Config) any { return *c.SpecialQueue }, q("special", "")},
		{"SUBMIT_QUEUE submit@frontend", func(c *Config) any { return *c.SubmitQueue }, q("submit", "frontend")},
		{"SYSTEM_NAME PIGLET", func(c *Config) any { return c.SystemName }, "PIGLET"},
		{"TARGET_LOAD_PCT 90", func(c *Config) any { return c.TargetLoadPct }, 90},
		{"TARGET_LOAD_VARIANCE -10%,+15%", func(c *Config) any { return c.TargetLoadVariance }, Variance{Minus: 10, Plus: 15}},
		{"TEST_ONLY true", func(c *Config) any { return c.TestOnly }, true},
		{"WALLT_LIMIT_LARGE_JOB 08:00:00", func(c *Config) any { return c.WalltLimitLargeJob }, 8 * h},
		{"WALLT_LIMIT_SMALL_JOB 120:00:00", func(c *Config) any { return c.WalltLimitSmallJob }, 120 * h},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		c := mustParse(t, "# a comment\n\t"+tt.line+"   # trailing comment\n")
		if got := tt.get(c); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %#v, want %#v", tt.line, got, tt.want)
		}
		name, _, _ := strings.Cut(tt.line, " ")
		covered[name] = true
		if _, ok := c.Set[name]; !ok {
			t.Errorf("%q: not recorded in Set", tt.line)
		}
	}
	for _, name := range Options() {
		if !covered[name] {
			t.Errorf("option %s not tested", name)
		}
	}
}

func TestBoolean(t *testing.T) {
	for _, s := range []string{"true", "yes", "on", "1", "True", "YES", "On"} {
		if !mustParse(t, "TEST_ONLY "+s).TestOnly {
			t.Errorf("%q is false", s)
		}
	}
	// "anything else evaluates to false"
	for _, s := range []string{"false", "no", "off", "0", "2", "y", "t", "enable"} {
		if mustParse(t, "TEST_ONLY "+s).TestOnly {
			t.Errorf("%q is true", s)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := mustParse(t, "# nothing\n\n   \n")
	want := Default()
	if !reflect.DeepEqual(c, want) {
		t.Errorf("empty file: %+v, want %+v", c, want)
	}
	if c.DecayFactor != 1 || c.OADecayFactor != 1 || c.FakeMachineMult != 1 || c.SchedRestartAction != "NONE" {
		t.Errorf("defaults %+v", c)
	}
}

func TestListsAppend(t *testing.T) {
	c := mustParse(t, "BATCH_QUEUES a\nBATCH_QUEUES b,c\nEXTERNAL_QUEUES x\nEXTERN_QUEUES y\n")
	if want := []QueueSpec{q("a", ""), q("b", ""), q("c", "")}; !reflect.DeepEqual(c.BatchQueues, want) {
		t.Errorf("batch %v", c.BatchQueues)
	}
	if want := []QueueSpec{q("x", ""), q("y", "")}; !reflect.DeepEqual(c.ExternalQueues, want) {
		t.Errorf("external %v", c.ExternalQueues)
	}
}

// TestSyntaxErrors checks every kind of error, with its line, option and
// argument.
func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		text           string
		line           int
		option, arg    string
		reasonContains string
	}{
		{"NO_SUCH_OPTION 1", 1, "NO_SUCH_OPTION", "", "unknown option"},
		{"\n\nmax_jobs 4", 3, "max_jobs", "", "upper case: MAX_JOBS"},
		{"round_robin: true", 1, "round_robin:", "", "unknown option"},
		{"MAX_JOBS", 1, "MAX_JOBS", "", "missing argument <integer>"},
		{"MAX_JOBS   # only a comment", 1, "MAX_JOBS", "", "missing argument"},
		{"MAX_JOBS ten", 1, "MAX_JOBS", "ten", "integer"},
		{"MAX_JOBS -1", 1, "MAX_JOBS", "-1", "non-negative"},
		{"MAX_JOBS 4 5", 1, "MAX_JOBS", "4 5", "integer"},
		{"MAX_JOBS 99999999999999999999", 1, "MAX_JOBS", "99999999999999999999", "integer"},
		{"DECAY_FACTOR high", 1, "DECAY_FACTOR", "high", "real"},
		{"DECAY_FACTOR NaN", 1, "DECAY_FACTOR", "NaN", "real"},
		{"DECAY_FACTOR 0x1p-2", 1, "DECAY_FACTOR", "0x1p-2", "real"},
		{"DECAY_FACTOR Inf", 1, "DECAY_FACTOR", "Inf", "real"},
		{"MAX_QUEUED_TIME 24", 1, "MAX_QUEUED_TIME", "24", "HH:MM:SS"},
		{"MAX_QUEUED_TIME 1:60:00", 1, "MAX_QUEUED_TIME", "1:60:00", "HH:MM:SS"},
		{"MAX_QUEUED_TIME 1:00:60", 1, "MAX_QUEUED_TIME", "1:00:60", "HH:MM:SS"},
		{"MAX_QUEUED_TIME 1:0:00", 1, "MAX_QUEUED_TIME", "1:0:00", "HH:MM:SS"},
		{"MAX_QUEUED_TIME :00:00", 1, "MAX_QUEUED_TIME", ":00:00", "HH:MM:SS"},
		{"MAX_QUEUED_TIME -1:00:00", 1, "MAX_QUEUED_TIME", "-1:00:00", "HH:MM:SS"},
		{"MAX_QUEUED_TIME 00:30", 1, "MAX_QUEUED_TIME", "00:30", "HH:MM:SS"},
		{"TARGET_LOAD_VARIANCE 10%,15%", 1, "TARGET_LOAD_VARIANCE", "10%,15%", "-mm%,+nn%"},
		{"TARGET_LOAD_VARIANCE -10%", 1, "TARGET_LOAD_VARIANCE", "-10%", "-mm%,+nn%"},
		{"TARGET_LOAD_VARIANCE +15%,-10%", 1, "TARGET_LOAD_VARIANCE", "+15%,-10%", "-mm%,+nn%"},
		{"TARGET_LOAD_VARIANCE -10,+15", 1, "TARGET_LOAD_VARIANCE", "-10,+15", "-mm%,+nn%"},
		{"TARGET_LOAD_VARIANCE -101%,+5%", 1, "TARGET_LOAD_VARIANCE", "-101%,+5%", "-mm%,+nn%"},
		{"TARGET_LOAD_VARIANCE -%,+5%", 1, "TARGET_LOAD_VARIANCE", "-%,+5%", "-mm%,+nn%"},
		{"SCHED_HOST bad host", 1, "SCHED_HOST", "bad host", "host name"},
		{"SERVER_HOST -x.org", 1, "SERVER_HOST", "-x.org", "host name"},
		{"SYSTEM_NAME a..b", 1, "SYSTEM_NAME", "a..b", "host name"},
		{"SUBMIT_QUEUE 1queue", 1, "SUBMIT_QUEUE", "1queue", "queue"},
		{"SUBMIT_QUEUE submit@", 1, "SUBMIT_QUEUE", "submit@", "queue"},
		{"SUBMIT_QUEUE @host", 1, "SUBMIT_QUEUE", "@host", "queue"},
		{"SPECIAL_QUEUE a,b", 1, "SPECIAL_QUEUE", "a,b", "queue"},
		{"DEDICATED_QUEUE averyveryverylongname", 1, "DEDICATED_QUEUE", "averyveryverylongname", "queue"},
		{"BATCH_QUEUES a,,b", 1, "BATCH_QUEUES", "a,,b", "commas"},
		{"BATCH_QUEUES a,", 1, "BATCH_QUEUES", "a,", "commas"},
		{"EXTERNAL_QUEUES x@y@z", 1, "EXTERNAL_QUEUES", "x@y@z", "commas"},
		{"SCHED_ACCT_DIR /a /b", 1, "SCHED_ACCT_DIR", "/a /b", "one path"},
		{"TEST_ONLY true false", 1, "TEST_ONLY", "true false", "one word"},
		{"MAX_JOBS 4\nMAX_JOBS 5", 2, "MAX_JOBS", "5", "already set on line 1"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.text), "cfg")
		var se SyntaxErrors
		if !errors.As(err, &se) || len(se) != 1 {
			t.Errorf("%q: err %v, want one syntax error", tt.text, err)
			continue
		}
		e := se[0]
		if e.File != "cfg" || e.Line != tt.line || e.Option != tt.option || e.Arg != tt.arg || !strings.Contains(e.Reason, tt.reasonContains) {
			t.Errorf("%q: got %+v, want line %d option %q arg %q reason ~%q", tt.text, *e, tt.line, tt.option, tt.arg, tt.reasonContains)
		}
		if !strings.Contains(e.Error(), "line ") {
			t.Errorf("%q: message %q does not name the line", tt.text, e.Error())
		}
	}
}

func TestAllErrorsReported(t *testing.T) {
	_, err := Parse(strings.NewReader("SUBMIT_QUEUE submit\nBOGUS 1\nMAX_JOBS x\nTEST_ONLY\n"), "f")
	var se SyntaxErrors
	if !errors.As(err, &se) {
		t.Fatalf("err %v", err)
	}
	var lines []int
	for _, e := range se {
		lines = append(lines, e.Line)
	}
	if !reflect.DeepEqual(lines, []int{2, 3, 4}) {
		t.Errorf("lines %v", lines)
	}
	if msg := err.Error(); !strings.Contains(msg, "f line 2: BOGUS: unknown option") || !strings.Contains(msg, `f line 3: MAX_JOBS: "x": `) {
		t.Errorf("message %q", msg)
	}
}

func TestLineTooLong(t *testing.T) {
	_, err := Parse(strings.NewReader("MAX_JOBS 1\nSYSTEM_NAME "+strings.Repeat("a", maxLine)+"\n"), "f")
	var se SyntaxErrors
	if !errors.As(err, &se) || se[0].Line != 2 || se[0].Reason != "line too long" {
		t.Errorf("err %v", err)
	}
}

func TestReadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	os.WriteFile(path, []byte("SUBMIT_QUEUE submit\n"), 0o644)
	c, err := ReadFile(path)
	if err != nil || c.SubmitQueue.Queue != "submit" {
		t.Errorf("%+v %v", c, err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestLooksLikeNAS(t *testing.T) {
	for text, want := range map[string]bool{
		"# NAS\n\nSUBMIT_QUEUE submit\n":             true,
		"  TEST_ONLY true # dry run\nround_robin: 1": true,
		"round_robin: False all\nSUBMIT_QUEUE x\n":   false,
		"by_queue true\n":                            false,
		"# only comments\n":                          false,
		"":                                           false,
		"NOT_AN_OPTION 1\n":                          false,
	} {
		if got := LooksLikeNAS(strings.NewReader(text)); got != want {
			t.Errorf("%q: %v", text, got)
		}
	}
}

func TestParseTimeSpec(t *testing.T) {
	for s, want := range map[string]time.Duration{"00:30:00": 30 * time.Minute, "4:00:00": 4 * time.Hour,
		"00:00:00": 0, "100:00:01": 100*time.Hour + time.Second} {
		if got, ok := ParseTimeSpec(s); !ok || got != want {
			t.Errorf("%q: %v %v", s, got, ok)
		}
	}
}

// FuzzParse feeds arbitrary files to the parser: it must not panic,
// and what it accepts must be a configuration whose options were set by
// lines of the file.
func FuzzParse(f *testing.F) {
	f.Add("SUBMIT_QUEUE submit\nBATCH_QUEUES small,large@hopper\n")
	f.Add("TARGET_LOAD_VARIANCE -10%,+15%\nTARGET_LOAD_PCT 90\n")
	f.Add("MAX_QUEUED_TIME 24:00:00 # a day\nDECAY_FACTOR 0.8\n")
	f.Add("BOGUS\n\tMAX_JOBS -1\nTEST_ONLY yes yes\n")
	f.Add("SCHED_RESTART_ACTION RESUBMIT\nSCHED_ACCT_DIR /tmp\n")
	f.Add("\x00\xff#\n@@,,\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := Parse(strings.NewReader(text), "fuzz")
		if err != nil {
			var se SyntaxErrors
			if !errors.As(err, &se) || len(se) == 0 {
				t.Fatalf("error %v is not syntax errors", err)
			}
			for _, e := range se {
				if e.Line < 1 {
					t.Fatalf("error without a line: %+v", e)
				}
			}
			return
		}
		for name, line := range c.Set {
			if !IsOption(name) || line < 1 {
				t.Fatalf("set %s on line %d", name, line)
			}
		}
		_ = Check(c, func(string) bool { return true })
	})
}
