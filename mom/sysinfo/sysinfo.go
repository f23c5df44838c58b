// Package sysinfo produces the node status strings pbs_mom reports to the
// server in IS_STATUS (spec 10 §5.3) and answers the generic resource
// monitor (RM) queries of the same names (spec 10 §10.4), reading Linux's
// /proc.
package sysinfo

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"gopbs/mom/config"
	"gopbs/mom/procfs"
)

// RM error numbers answered as "<name>=? <n>".
const (
	RM_ERR_UNKNOWN  = 15201
	RM_ERR_BADPARAM = 15202
	RM_ERR_NOPARAM  = 15203
	RM_ERR_EXIST    = 15204
	RM_ERR_SYSTEM   = 15205
)

// builtinNames are the computed RM names; static config resources with these
// names are answered but not listed in gres.
var builtinNames = map[string]bool{
	"arch": true, "opsys": true, "uname": true, "validuser": true, "message": true, "gres": true,
	"state": true, "jobs": true, "varattr": true, "cput": true, "mem": true, "sessions": true,
	"pids": true, "nsessions": true, "nusers": true, "size": true, "idletime": true, "resi": true,
	"totmem": true, "availmem": true, "physmem": true, "ncpus": true, "loadave": true,
	"walltime": true, "quota": true, "netload": true, "jobdata": true,
}

// Collector reads system information. The zero value reads the real system
// with an empty configuration.
type Collector struct {
	Proc   string         // proc mount point; "" = /proc
	Dev    string         // device directory for idletime; "" = /dev
	Config *config.Config // static resources, $max_load/$ideal_load; nil = none
	// Uname overrides uname(2) (tests).
	Uname func() (sysname, nodename, release, version, machine string, err error)
	// Now overrides the clock (tests).
	Now func() time.Time
}

// Dynamic holds the status items that come from MOM's state rather than the
// system.
type Dynamic struct {
	State   string   // "free", "busy" or "down"
	Jobs    []string // ids of all jobs MOM holds
	VarAttr string   // joined $varattr outputs ("" = none)
	Message string   // node health message ("" = omitted)
	JobData string   // mom_job_sync data ("" = omitted)
}

func (c *Collector) procDir() string {
	if c.Proc == "" {
		return "/proc"
	}
	return c.Proc
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Status returns the IS_STATUS strings in TORQUE's order.
func (c *Collector) Status(d Dynamic) []string {
	var out []string
	add := func(name string) {
		v, rmErr := c.Query(name)
		switch {
		case rmErr != 0:
			out = append(out, fmt.Sprintf("%s=? %d", name, rmErr))
		case v != "":
			out = append(out, name+"="+v)
		}
	}
	if c.Config != nil {
		if v, ok := c.Config.StaticResource("arch"); ok {
			out = append(out, "arch="+v)
		}
	}
	for _, n := range []string{"opsys", "uname", "sessions", "nsessions", "nusers", "idletime",
		"totmem", "availmem", "physmem", "ncpus", "loadave"} {
		add(n)
	}
	if d.Message != "" {
		out = append(out, "message="+d.Message)
	}
	out = append(out, "gres="+c.gres())
	add("netload")
	if c.Config != nil {
		for _, fs := range c.Config.SizeFS {
			if v, err := sizeFS(fs); err == nil {
				out = append(out, "size="+v)
			} else {
				out = append(out, fmt.Sprintf("size=? %d", RM_ERR_SYSTEM))
			}
		}
	}
	if c.Config != nil && c.Config.CheckpointScript != "" {
		// GoPBS: this MOM takes checkpoints (pbs_server admits jobs
		// asking for them, README deliberate differences)
		out = append(out, "checkpoint=yes")
	}
	out = append(out, "state="+d.State)
	out = append(out, "jobs="+blankIfEmpty(strings.Join(d.Jobs, " ")))
	if d.JobData != "" {
		out = append(out, "jobdata="+d.JobData)
	}
	out = append(out, "varattr="+blankIfEmpty(d.VarAttr))
	return out
}

func blankIfEmpty(s string) string {
	if s == "" {
		return " "
	}
	return s
}

// Answer formats an RM answer line for a request: "<request>=<value>" or
// "<request>=? <rm_errno>".
func (c *Collector) Answer(request string) string {
	v, rmErr := c.Query(request)
	if rmErr != 0 {
		return fmt.Sprintf("%s=? %d", request, rmErr)
	}
	return request + "=" + v
}

// Query answers one generic RM request ("name" or "name[param=value]"). It
// returns the value, or a non-zero RM error number.
func (c *Collector) Query(request string) (string, int) {
	name, param := request, ""
	if i := strings.IndexByte(request, '['); i >= 0 && strings.HasSuffix(request, "]") {
		name, param = request[:i], request[i+1:len(request)-1]
	}
	if c.Config != nil && param == "" {
		for _, r := range c.Config.Resources {
			if r.Name != name {
				continue
			}
			if !r.Command {
				return r.Value, 0
			}
			return shellEscape(r.Value)
		}
	}
	switch name {
	case "arch", "opsys":
		return "linux", 0
	case "uname":
		return c.uname()
	case "sessions":
		s := c.userSessions()
		if len(s) == 0 {
			return "", RM_ERR_UNKNOWN
		}
		parts := make([]string, len(s))
		for i, sid := range s {
			parts[i] = strconv.Itoa(sid)
		}
		return strings.Join(parts, " "), 0
	case "nsessions":
		s := c.userSessions()
		if len(s) == 0 {
			return "", RM_ERR_UNKNOWN
		}
		return strconv.Itoa(len(s)), 0
	case "nusers":
		return strconv.Itoa(c.nusers()), 0
	case "idletime":
		return c.idletime()
	case "totmem", "availmem", "physmem":
		return c.memInfo(name)
	case "ncpus":
		return c.ncpus()
	case "loadave":
		return c.loadave()
	case "netload":
		return c.netload()
	case "gres":
		return c.gres(), 0
	case "size":
		if param == "" {
			return "", RM_ERR_NOPARAM
		}
		fs, ok := strings.CutPrefix(param, "fs=")
		if !ok {
			return "", RM_ERR_BADPARAM
		}
		v, err := sizeFS(fs)
		if err != nil {
			return "", RM_ERR_EXIST
		}
		return v, 0
	case "validuser":
		return validUser(param)
	case "max_load", "ideal_load":
		if c.Config == nil {
			return "", RM_ERR_UNKNOWN
		}
		v := c.Config.MaxLoad
		if name == "ideal_load" {
			v = c.Config.IdealLoad
		}
		if v < 0 {
			return "", RM_ERR_UNKNOWN
		}
		return strconv.FormatFloat(v, 'f', -1, 64), 0
	}
	return "", RM_ERR_UNKNOWN
}

// shellEscape runs a "name !command" resource and returns its first line.
func shellEscape(command string) (string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/bin/sh", "-c", command).Output()
	if err != nil && len(out) == 0 {
		return "", RM_ERR_SYSTEM
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line, 0
}

// validUser answers validuser[name]: "yes" when the system knows the
// user (through NSS, as id(1) looks it up), else "no".
func validUser(name string) (string, int) {
	if name == "" {
		return "", RM_ERR_NOPARAM
	}
	if _, err := exec.LookPath("id"); err != nil {
		return "", RM_ERR_SYSTEM
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if exec.CommandContext(ctx, "id", "--", name).Run() == nil {
		return "yes", 0
	}
	return "no", 0
}

func (c *Collector) uname() (string, int) {
	f := c.Uname
	if f == nil {
		f = realUname
	}
	s, n, r, v, m, err := f()
	if err != nil {
		return "", RM_ERR_SYSTEM
	}
	return strings.Join([]string{s, n, r, v, m}, " "), 0
}

func realUname() (string, string, string, string, string, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", "", "", "", "", err
	}
	str := func(b []byte) string {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		return string(b)
	}
	return str(u.Sysname[:]), str(u.Nodename[:]), str(u.Release[:]), str(u.Version[:]), str(u.Machine[:]), nil
}

func (c *Collector) procs() []procfs.Proc {
	ps, _ := procfs.FS{Root: c.procDir()}.All()
	return ps
}

// userSessions returns the distinct session ids of processes owned by
// non-root users, in process-table order.
func (c *Collector) userSessions() []int {
	seen := map[int]bool{}
	var out []int
	for _, p := range c.procs() {
		if p.UID <= 0 || p.Session <= 0 || seen[p.Session] {
			continue
		}
		seen[p.Session] = true
		out = append(out, p.Session)
	}
	return out
}

func (c *Collector) nusers() int {
	seen := map[int]bool{}
	for _, p := range c.procs() {
		if p.UID > 0 {
			seen[p.UID] = true
		}
	}
	return len(seen)
}

// idletime is the time since the most recent access of a terminal or input
// device; without any, the system uptime.
func (c *Collector) idletime() (string, int) {
	dev := c.Dev
	if dev == "" {
		dev = "/dev"
	}
	var latest time.Time
	for _, pat := range []string{"tty[0-9]*", "pts/[0-9]*", "input/mice", "input/event*"} {
		matches, _ := filepath.Glob(filepath.Join(dev, pat))
		for _, m := range matches {
			fi, err := os.Stat(m)
			if err != nil {
				continue
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				if at := time.Unix(st.Atim.Sec, st.Atim.Nsec); at.After(latest) {
					latest = at
				}
			}
		}
	}
	now := c.now()
	if !latest.IsZero() && !latest.After(now) {
		return strconv.FormatInt(int64(now.Sub(latest).Seconds()), 10), 0
	}
	b, err := os.ReadFile(filepath.Join(c.procDir(), "uptime"))
	if err != nil {
		return "", RM_ERR_SYSTEM
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "", RM_ERR_SYSTEM
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return "", RM_ERR_SYSTEM
	}
	return strconv.FormatInt(int64(up), 10), 0
}

// meminfo reads /proc/meminfo values in kB.
func (c *Collector) meminfo() (map[string]uint64, error) {
	f, err := os.Open(filepath.Join(c.procDir(), "meminfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]uint64{}
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
			m[name] = v
		}
	}
	return m, sc.Err()
}

func (c *Collector) memInfo(name string) (string, int) {
	m, err := c.meminfo()
	if err != nil {
		return "", RM_ERR_SYSTEM
	}
	var v uint64
	switch name {
	case "totmem":
		v = m["MemTotal"] + m["SwapTotal"]
	case "availmem":
		v = m["MemFree"] + m["SwapFree"]
	case "physmem":
		v = m["MemTotal"]
	}
	return strconv.FormatUint(v, 10) + "kb", 0
}

func (c *Collector) ncpus() (string, int) {
	b, err := os.ReadFile(filepath.Join(c.procDir(), "cpuinfo"))
	if err != nil {
		return "", RM_ERR_SYSTEM
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "processor" {
			n++
		}
	}
	if n == 0 {
		n = runtime.NumCPU()
	}
	return strconv.Itoa(n), 0
}

// LoadAverage returns the 1-minute load average.
func (c *Collector) LoadAverage() (float64, error) {
	b, err := os.ReadFile(filepath.Join(c.procDir(), "loadavg"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("empty loadavg")
	}
	return strconv.ParseFloat(f[0], 64)
}

func (c *Collector) loadave() (string, int) {
	l, err := c.LoadAverage()
	if err != nil {
		return "", RM_ERR_SYSTEM
	}
	return fmt.Sprintf("%.2f", l), 0
}

// netload sums received and transmitted bytes of all interfaces.
func (c *Collector) netload() (string, int) {
	b, err := os.ReadFile(filepath.Join(c.procDir(), "net", "dev"))
	if err != nil {
		return "", RM_ERR_SYSTEM
	}
	var total uint64
	for _, line := range strings.Split(string(b), "\n") {
		_, rest, ok := strings.Cut(line, ":")
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
	return strconv.FormatUint(total, 10), 0
}

// gres lists static config resources that are not built-in names.
func (c *Collector) gres() string {
	if c.Config == nil {
		return ""
	}
	var parts []string
	for _, r := range c.Config.Resources {
		if r.Command || builtinNames[r.Name] || strings.HasPrefix(r.Name, "size") {
			continue
		}
		parts = append(parts, r.Name+":"+r.Value)
	}
	return strings.Join(parts, "+")
}

// sizeFS returns "<free>kb:<total>kb" for a file system.
func sizeFS(path string) (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return "", err
	}
	bs := uint64(st.Bsize)
	return fmt.Sprintf("%dkb:%dkb", st.Bavail*bs/1024, st.Blocks*bs/1024), nil
}
