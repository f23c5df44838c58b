package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	cmd := filepath.Join(dir, "schedule")
	os.WriteFile(cmd, []byte("#!/bin/sh\n"), 0o755)
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("x"), 0o644)
	base := "SUBMIT_QUEUE submit\nBATCH_QUEUES small,large\n"
	local := func(h string) bool { return h == "localhost" }
	tests := []struct {
		name, text string
		want       []string // substrings of the problems, in order; none: no problem
	}{
		{"minimal", base, nil},
		{"no submit queue", "BATCH_QUEUES a\n", []string{"no SUBMIT_QUEUE"}},
		{"no batch queue", "SUBMIT_QUEUE s\n", []string{"no BATCH_QUEUES"}},
		{"queue with two roles", base + "SPECIAL_QUEUE small\n", []string{"queue small is both SPECIAL_QUEUE and BATCH_QUEUES"}},
		{"submit is a batch queue", "SUBMIT_QUEUE a\nBATCH_QUEUES a\n", []string{"queue a is both SUBMIT_QUEUE and BATCH_QUEUES"}},
		{"prime time without times", base + "ENFORCE_PRIME_TIME true\n", []string{"needs PRIME_TIME_START and PRIME_TIME_END"}},
		{"prime time past midnight", base + "ENFORCE_PRIME_TIME true\nPRIME_TIME_START 08:00:00\nPRIME_TIME_END 25:00:00\n", []string{"times of day"}},
		{"empty prime time", base + "ENFORCE_PRIME_TIME true\nPRIME_TIME_START 08:00:00\nPRIME_TIME_END 08:00:00\n", []string{"equals"}},
		{"small limit above limit", base + "ENFORCE_PRIME_TIME true\nPRIME_TIME_START 08:00:00\nPRIME_TIME_END 17:00:00\nPRIME_TIME_WALLT_LIMIT 01:00:00\nPRIME_TIME_SMALL_WALLT_LIMIT 02:00:00\nPRIME_TIME_SMALL_NODE_LIMIT 2\n", []string{"longer than PRIME_TIME_WALLT_LIMIT"}},
		{"dedicated without command and name", base + "ENFORCE_DEDICATED_TIME true\n", []string{"needs DEDICATED_TIME_COMMAND", "needs SYSTEM_NAME"}},
		{"dedicated command not executable", base + "ENFORCE_DEDICATED_TIME true\nSYSTEM_NAME piglet\nDEDICATED_TIME_COMMAND " + plain + "\n", []string{"not an executable file"}},
		{"dedicated command missing", base + "ENFORCE_DEDICATED_TIME true\nSYSTEM_NAME piglet\nDEDICATED_TIME_COMMAND " + dir + "/none\n", []string{"not an executable file"}},
		{"dedicated ok", base + "ENFORCE_DEDICATED_TIME true\nSYSTEM_NAME piglet\nDEDICATED_TIME_COMMAND " + cmd + "\nDEDICATED_QUEUE ded\n", nil},
		{"dedicated queue never runs", base + "DEDICATED_QUEUE ded\n", []string{"would never run"}},
		{"allocation without directory", base + "ENFORCE_ALLOCATION true\n", []string{"needs SCHED_ACCT_DIR"}},
		{"accounting directory missing", base + "SCHED_ACCT_DIR " + dir + "/none\n", []string{"is not a directory"}},
		{"accounting directory is a file", base + "SCHED_ACCT_DIR " + plain + "\n", []string{"is not a directory"}},
		{"decay factors", base + "DECAY_FACTOR 0\nOA_DECAY_FACTOR 1.5\n", []string{"DECAY_FACTOR 0 is out of range", "OA_DECAY_FACTOR 1.5 is out of range"}},
		{"min above max", base + "MAX_JOBS 2\nMIN_JOBS 3\n", []string{"MIN_JOBS 3 is larger than MAX_JOBS 2"}},
		{"fake mult zero", base + "FAKE_MACHINE_MULT 0\n", []string{"FAKE_MACHINE_MULT must be at least 1"}},
		{"variance without target", base + "TARGET_LOAD_VARIANCE -5%,+5%\n", []string{"without TARGET_LOAD_PCT"}},
		{"systime percent", base + "HIGH_SYSTIME 101\n", []string{"more than 100 percent"}},
		{"small limit without small jobs", base + "WALLT_LIMIT_SMALL_JOB 01:00:00\n", []string{"SMALL_JOB_MAX is 0"}},
		{"restart action", base + "SCHED_RESTART_ACTION reboot\n", []string{`SCHED_RESTART_ACTION "REBOOT" is not known`}},
		{"sched host elsewhere", base + "SCHED_HOST 192.0.2.1\n", []string{"SCHED_HOST 192.0.2.1 is not this host"}},
		{"sched host here", base + "SCHED_HOST localhost\n", nil},
	}
	for _, tt := range tests {
		c := mustParse(t, tt.text)
		err := Check(c, local)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		var ps Problems
		if !errors.As(err, &ps) || len(ps) != len(tt.want) {
			t.Errorf("%s: %v, want %d problems", tt.name, err, len(tt.want))
			continue
		}
		for i, p := range ps {
			if !strings.Contains(p.Text, tt.want[i]) {
				t.Errorf("%s: problem %q, want ~%q", tt.name, p.Text, tt.want[i])
			}
			if p.Fix == "" || !strings.Contains(p.Error(), "suggestion: ") {
				t.Errorf("%s: %q suggests no fix", tt.name, p.Error())
			}
		}
	}
}
