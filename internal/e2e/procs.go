package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Process is a live process.
type Process struct {
	PID  int
	Argv []string
}

// String returns the process's id and command line, as ps shows them.
func (p Process) String() string { return strconv.Itoa(p.PID) + " " + strings.Join(p.Argv, " ") }

// Processes returns the live processes of user uid (zombies left out),
// read from /proc: a test sees what its jobs left running.
func Processes(uid int) []Process {
	var out []Process
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", d.Name())
		var st syscall.Stat_t
		if syscall.Stat(dir, &st) != nil || int(st.Uid) != uid {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		stat, _ := os.ReadFile(filepath.Join(dir, "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' {
			continue // a zombie, or gone meanwhile
		}
		argv := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		out = append(out, Process{PID: pid, Argv: argv})
	}
	return out
}
