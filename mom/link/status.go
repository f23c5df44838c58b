package link

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// RM error numbers (spec 10 §5.3).
const (
	RM_ERR_UNKNOWN  = 15201 // unknown resource
	RM_ERR_BADPARAM = 15202
	RM_ERR_NOPARAM  = 15203
	RM_ERR_EXIST    = 15204
	RM_ERR_SYSTEM   = 15205
)

// statusNames is the fixed order of IS_STATUS items (spec 10 §5.3).
var statusNames = []string{"arch", "opsys", "uname", "sessions", "nsessions", "nusers", "idletime",
	"totmem", "availmem", "physmem", "ncpus", "loadave", "message", "gres", "netload", "size",
	"state", "jobs", "jobdata", "varattr"}

// StatusStrings returns the body of an IS_STATUS message.
func (m *Mom) StatusStrings(ctx context.Context) []string {
	var out []string
	for _, name := range statusNames {
		switch name {
		case "arch":
			if v, ok := m.conf().StaticResource("arch"); ok {
				out = append(out, "arch="+v)
			}
			continue
		case "size":
			for _, fs := range m.conf().SizeFS {
				if v, err := fsSize(fs); err == nil {
					out = append(out, "size="+v)
				}
			}
			continue
		case "message", "jobdata":
			if v, _ := m.resource(ctx, name, ""); v != "" {
				out = append(out, name+"="+v)
			}
			continue
		}
		v, rmerr := m.resource(ctx, name, "")
		if rmerr != 0 {
			out = append(out, fmt.Sprintf("%s=? %d", name, rmerr))
			continue
		}
		if v == "" && name != "gres" {
			continue
		}
		out = append(out, name+"="+v)
	}
	return out
}

// resource computes a named resource: a static mom-config value first,
// else the platform query. It returns the value or an RM error number.
func (m *Mom) resource(ctx context.Context, name, param string) (string, int) {
	if name != "state" && name != "jobs" && name != "message" {
		for _, r := range m.conf().Resources {
			if r.Name != name {
				continue
			}
			if !r.Command {
				return r.Value, 0
			}
			return shellEscape(ctx, r.Value)
		}
	}
	proc := m.opt.Proc.Root
	switch name {
	case "arch", "opsys":
		return "linux", 0
	case "uname":
		var u unix.Utsname
		if err := unix.Uname(&u); err != nil {
			return "", RM_ERR_SYSTEM
		}
		return strings.Join([]string{unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Nodename[:]),
			unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), unix.ByteSliceToString(u.Machine[:])}, " "), 0
	case "sessions", "nsessions", "nusers":
		sessions, users := m.userSessions()
		switch {
		case name == "nusers":
			return strconv.Itoa(users), 0
		case len(sessions) == 0:
			return "", RM_ERR_UNKNOWN
		case name == "nsessions":
			return strconv.Itoa(len(sessions)), 0
		}
		parts := make([]string, len(sessions))
		for i, s := range sessions {
			parts[i] = strconv.Itoa(s)
		}
		return strings.Join(parts, " "), 0
	case "idletime":
		return strconv.FormatInt(idleTime(m.opt.Now()), 10), 0
	case "totmem", "availmem", "physmem":
		mi, err := meminfo(proc)
		if err != nil {
			return "", RM_ERR_SYSTEM
		}
		switch name {
		case "totmem":
			return fmt.Sprintf("%dkb", mi["MemTotal"]+mi["SwapTotal"]), 0
		case "availmem":
			return fmt.Sprintf("%dkb", mi["MemFree"]+mi["SwapFree"]), 0
		}
		return fmt.Sprintf("%dkb", mi["MemTotal"]), 0
	case "ncpus":
		n, err := ncpus(proc)
		if err != nil {
			return "", RM_ERR_SYSTEM
		}
		return strconv.Itoa(n), 0
	case "loadave":
		l, err := loadavg(proc)
		if err != nil {
			return "", RM_ERR_SYSTEM
		}
		return fmt.Sprintf("%.2f", l), 0
	case "netload":
		n, err := netload(proc)
		if err != nil {
			return "", RM_ERR_SYSTEM
		}
		return strconv.FormatUint(n, 10), 0
	case "gres":
		var parts []string
		for _, r := range m.conf().Resources {
			if r.Command || strings.HasPrefix(r.Name, "size") || builtinResource[r.Name] {
				continue
			}
			parts = append(parts, r.Name+":"+r.Value)
		}
		return strings.Join(parts, "+"), 0
	case "state":
		if m.reportedDown() {
			return "down", 0
		}
		if m.busy() {
			return "busy", 0
		}
		return "free", 0
	case "jobs":
		m.mu.Lock()
		// In the order the jobs arrived, as TORQUE lists them ("9.vm 10.vm").
		list := make([]*job, 0, len(m.jobs))
		for _, j := range m.jobs {
			list = append(list, j)
		}
		m.mu.Unlock()
		sort.Slice(list, func(a, b int) bool { return list[a].order < list[b].order })
		ids := make([]string, len(list))
		for i, j := range list {
			ids[i] = j.id
		}
		if len(ids) == 0 {
			return " ", 0
		}
		return strings.Join(ids, " "), 0
	case "varattr":
		var parts []string
		for _, va := range m.conf().VarAttrs {
			if v, rmerr := shellEscape(ctx, va.Command); rmerr == 0 {
				parts = append(parts, v)
			}
		}
		if len(parts) == 0 {
			return " ", 0
		}
		return strings.Join(parts, ";"), 0
	case "message":
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.message, 0
	case "jobdata":
		return "", 0
	case "size":
		fs := strings.TrimPrefix(param, "fs=")
		if fs == "" {
			return "", RM_ERR_NOPARAM
		}
		v, err := fsSize(fs)
		if err != nil {
			return "", RM_ERR_EXIST
		}
		return v, 0
	case "validuser":
		if _, err := exec.LookPath("id"); err == nil && param != "" {
			if err := exec.CommandContext(ctx, "id", "--", param).Run(); err == nil {
				return "yes", 0
			}
			return "no", 0
		}
		return "", RM_ERR_NOPARAM
	}
	return "", RM_ERR_UNKNOWN
}

// builtinResource are config names that are not generic resources.
var builtinResource = map[string]bool{"arch": true, "opsys": true, "max_load": true, "ideal_load": true}

// busy applies $max_load/$ideal_load (spec 10 §5.7), with hysteresis.
func (m *Mom) busy() bool {
	if m.conf().MaxLoad < 0 {
		return false
	}
	l, err := loadavg(m.opt.Proc.Root)
	if err != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l >= m.conf().MaxLoad {
		m.isBusy = true
	} else if l <= m.conf().IdealLoad {
		m.isBusy = false
	}
	return m.isBusy
}

// userSessions returns the sorted session ids of processes owned by
// non-root users and the number of such users.
func (m *Mom) userSessions() ([]int, int) {
	procs, err := m.opt.Proc.All()
	if err != nil {
		return nil, 0
	}
	sids := map[int]bool{}
	users := map[int]bool{}
	for _, p := range procs {
		if p.UID <= 0 || p.Session <= 0 {
			continue
		}
		sids[p.Session] = true
		users[p.UID] = true
	}
	out := make([]int, 0, len(sids))
	for s := range sids {
		out = append(out, s)
	}
	sort.Ints(out)
	return out, len(users)
}

func shellEscape(ctx context.Context, command string) (string, int) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/bin/sh", "-c", command).Output()
	if err != nil && len(out) == 0 {
		return "", RM_ERR_SYSTEM
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line, 0
}

func meminfo(proc string) (map[string]uint64, error) {
	f, err := os.Open(filepath.Join(proc, "meminfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseUint(fields[0], 10, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

func ncpus(proc string) (int, error) {
	b, err := os.ReadFile(filepath.Join(proc, "cpuinfo"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("processor")) {
			n++
		}
	}
	return n, nil
}

func loadavg(proc string) (float64, error) {
	b, err := os.ReadFile(filepath.Join(proc, "loadavg"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("loadavg: empty")
	}
	return strconv.ParseFloat(f[0], 64)
}

func netload(proc string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(proc, "net", "dev"))
	if err != nil {
		return 0, err
	}
	var total uint64
	for _, l := range strings.Split(string(b), "\n") {
		_, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 9 {
			continue
		}
		rx, err1 := strconv.ParseUint(f[0], 10, 64)
		tx, err2 := strconv.ParseUint(f[8], 10, 64)
		if err1 == nil && err2 == nil {
			total += rx + tx
		}
	}
	return total, nil
}

// idleTime returns seconds since the last terminal activity (the newest
// access time of /dev/pts/* and /dev/tty*).
func idleTime(now time.Time) int64 {
	var newest time.Time
	for _, pat := range []string{"/dev/pts/*", "/dev/tty*"} {
		names, _ := filepath.Glob(pat)
		for _, n := range names {
			var st unix.Stat_t
			if unix.Stat(n, &st) != nil {
				continue
			}
			if t := time.Unix(st.Atim.Unix()); t.After(newest) {
				newest = t
			}
		}
	}
	if newest.IsZero() || newest.After(now) {
		return 0
	}
	return int64(now.Sub(newest) / time.Second)
}

// fsSize answers size[fs=path]: "<free>kb:<total>kb".
func fsSize(path string) (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return "", err
	}
	bs := uint64(st.Bsize)
	return fmt.Sprintf("%dkb:%dkb", st.Bavail*bs/1024, st.Blocks*bs/1024), nil
}
