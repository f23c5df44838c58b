// Package procfs reads the process table from a Linux /proc file system the
// way pbs_mom uses it: processes grouped by session id, with CPU times and
// memory sizes for usage accounting.
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ClockTicks is the kernel's USER_HZ on Linux (times in /proc/<pid>/stat).
const ClockTicks = 100

// Proc is one process as read from /proc/<pid>/stat.
type Proc struct {
	PID     int
	Comm    string
	State   byte // R, S, D, Z, T, ...
	PPID    int
	PGRP    int
	Session int
	UTime   uint64 // clock ticks
	STime   uint64
	CUTime  uint64
	CSTime  uint64
	VSize   uint64 // bytes
	RSS     uint64 // pages
	UID     int    // real uid (owner of /proc/<pid>), -1 if unknown
}

// CPUTicks returns utime+stime+cutime+cstime in clock ticks.
func (p *Proc) CPUTicks() uint64 { return p.UTime + p.STime + p.CUTime + p.CSTime }

// FS reads processes below a proc mount point.
type FS struct {
	Root string // usually "/proc"
}

// Default is the system's /proc.
var Default = FS{Root: "/proc"}

// ParseStat parses the content of /proc/<pid>/stat.
func ParseStat(b []byte) (Proc, error) {
	var p Proc
	open := bytes.IndexByte(b, '(')
	closeIdx := bytes.LastIndexByte(b, ')')
	if open < 1 || closeIdx < open {
		return p, fmt.Errorf("procfs: malformed stat")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return p, fmt.Errorf("procfs: bad pid: %w", err)
	}
	p.PID = pid
	p.Comm = string(b[open+1 : closeIdx])
	f := strings.Fields(string(b[closeIdx+1:]))
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 22 {
		return p, fmt.Errorf("procfs: short stat for pid %d", pid)
	}
	if len(f[0]) != 1 {
		return p, fmt.Errorf("procfs: bad state for pid %d", pid)
	}
	p.State = f[0][0]
	ints := []*int{&p.PPID, &p.PGRP, &p.Session}
	for i, dst := range ints {
		if *dst, err = strconv.Atoi(f[1+i]); err != nil {
			return p, fmt.Errorf("procfs: bad field %d for pid %d", 4+i, pid)
		}
	}
	u64 := []struct {
		idx int
		dst *uint64
	}{{14, &p.UTime}, {15, &p.STime}, {16, &p.CUTime}, {17, &p.CSTime}, {23, &p.VSize}, {24, &p.RSS}}
	for _, u := range u64 {
		v := f[u.idx-3]
		if strings.HasPrefix(v, "-") { // cutime/cstime/rss are signed in the kernel
			*u.dst = 0
			continue
		}
		if *u.dst, err = strconv.ParseUint(v, 10, 64); err != nil {
			return p, fmt.Errorf("procfs: bad field %d for pid %d", u.idx, pid)
		}
	}
	p.UID = -1
	return p, nil
}

// Proc reads one process. Returns an error wrapping os.ErrNotExist when the
// process is gone.
func (fs FS) Proc(pid int) (Proc, error) {
	dir := filepath.Join(fs.Root, strconv.Itoa(pid))
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Proc{}, err
	}
	p, err := ParseStat(b)
	if err != nil {
		return p, err
	}
	p.UID = ownerUID(dir)
	return p, nil
}

// All returns every process currently listed. Processes that disappear while
// reading are skipped.
func (fs FS) All() ([]Proc, error) {
	ents, err := os.ReadDir(fs.Root)
	if err != nil {
		return nil, fmt.Errorf("procfs: %w", err)
	}
	procs := make([]Proc, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		p, err := fs.Proc(pid)
		if err != nil {
			continue
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// Session returns the processes whose session id is sid.
func (fs FS) Session(sid int) ([]Proc, error) {
	all, err := fs.All()
	if err != nil {
		return nil, err
	}
	var out []Proc
	for _, p := range all {
		if p.Session == sid {
			out = append(out, p)
		}
	}
	return out, nil
}
