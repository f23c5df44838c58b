// Package cgroup gives each job of pbs_mom a control group of its own on the
// cgroup v2 (unified) hierarchy: the job's processes start in it, its CPU
// time and memory are read from it, its memory limit is the kernel's
// memory.max, an out-of-memory kill is learnt from memory.events, and the
// job's leftover processes are killed through it.
//
// A Root is the directory under which job groups are made (pbs_mom's
// $cgroup_root). Job groups are used through a descriptor of their
// directory opened when they are made, so a group of the same name made
// later by someone else is never touched.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultName is the directory pbs_mom makes at the top of the cgroup v2
// hierarchy when $cgroup_root does not name one.
const DefaultName = "pbs_mom"

// ErrNoHierarchy is returned by Mount when no cgroup v2 file system is
// mounted.
var ErrNoHierarchy = errors.New("no cgroup v2 hierarchy mounted")

// Mount returns the mount point of the cgroup v2 hierarchy, read from
// /proc/self/mountinfo.
func Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	defer f.Close()
	p, ok := parseMountinfo(f)
	if !ok {
		return "", ErrNoHierarchy
	}
	return p, nil
}

// parseMountinfo returns the mount point of the first cgroup2 file system
// in a mountinfo listing (proc(5): the file system type follows the " - "
// separator; the mount point is the fifth field, with octal escapes).
func parseMountinfo(r io.Reader) (string, bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(f) || f[sep+1] != "cgroup2" {
			continue
		}
		return unescapeOctal(f[4]), true
	}
	return "", false
}

// unescapeOctal undoes mountinfo's \NNN escapes of spaces and the like.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Root is a directory of the cgroup v2 hierarchy holding job groups.
type Root struct {
	dir    string
	memory bool
}

// Setup makes dir (and its missing parents) in the cgroup v2 hierarchy
// mounted at mount and delegates the memory controller down to it where
// the hierarchy allows: each level from the mount down to dir gets
// "+memory" in cgroup.subtree_control when memory is among its
// controllers. dir empty means mount/DefaultName. An error means job
// groups cannot be made here.
func Setup(mount, dir string) (*Root, error) {
	if dir == "" {
		dir = filepath.Join(mount, DefaultName)
	}
	dir = filepath.Clean(dir)
	rel, err := filepath.Rel(mount, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("cgroup: %s is not in the cgroup v2 hierarchy at %s", dir, mount)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: make %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return nil, fmt.Errorf("cgroup: %s is not a control group: %w", dir, err)
	}
	levels := []string{mount}
	if rel != "." {
		cur := mount
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			cur = filepath.Join(cur, part)
			levels = append(levels, cur)
		}
	}
	for _, l := range levels {
		if !hasController(l, "cgroup.controllers", "memory") {
			break
		}
		if hasController(l, "cgroup.subtree_control", "memory") {
			continue
		}
		if err := os.WriteFile(filepath.Join(l, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
			break
		}
	}
	return &Root{dir: dir, memory: hasController(dir, "cgroup.subtree_control", "memory")}, nil
}

// hasController reports whether the space-separated list in dir/file
// names controller.
func hasController(dir, file, controller string) bool {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return false
	}
	for _, c := range strings.Fields(string(b)) {
		if c == controller {
			return true
		}
	}
	return false
}

// Controllers returns the controllers available in job groups (the
// content of the root's cgroup.subtree_control).
func (r *Root) Controllers() []string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "cgroup.subtree_control"))
	return strings.Fields(string(b))
}

// Dir returns the root's directory.
func (r *Root) Dir() string { return r.dir }

// Memory reports whether job groups have the memory controller: whether
// memory.max limits them.
func (r *Root) Memory() bool { return r.memory }

// groupName turns a job id into a directory name (job ids hold no '/';
// anything odd is replaced).
func groupName(name string) string {
	if name == "" || name == "." || name == ".." {
		return "_" + name
	}
	return strings.ReplaceAll(name, "/", "_")
}

// Group is one job's control group.
type Group struct {
	path string
	dir  *os.File
	ino  uint64
}

// Create makes the group name under the root. A leftover empty group of
// that name is replaced; one that still has processes is an error. When
// memMax is not zero and the root has the memory controller, the group's
// memory.max is memMax, its swap is not used (memory.swap.max 0) and an
// out-of-memory kill takes all its processes (memory.oom.group 1).
func (r *Root) Create(name string, memMax uint64) (*Group, error) {
	p := filepath.Join(r.dir, groupName(name))
	if err := os.Mkdir(p, 0o755); errors.Is(err, os.ErrExist) {
		if err := unix.Rmdir(p); err != nil {
			return nil, fmt.Errorf("cgroup: %s exists and cannot be removed: %w", p, err)
		}
		err = os.Mkdir(p, 0o755)
		if err != nil {
			return nil, fmt.Errorf("cgroup: %w", err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	g, err := open(p)
	if err != nil {
		_ = unix.Rmdir(p)
		return nil, err
	}
	if memMax > 0 && r.memory {
		if err := g.limitMemory(memMax); err != nil {
			_ = g.Remove()
			return nil, err
		}
	}
	return g, nil
}

// limitMemory sets memory.max to memMax bytes, without swap, and makes an
// out-of-memory kill take the whole group.
func (g *Group) limitMemory(memMax uint64) error {
	if err := g.write("memory.max", strconv.FormatUint(memMax, 10)); err != nil {
		return err
	}
	_ = g.write("memory.swap.max", "0") // absent without swap accounting
	return g.write("memory.oom.group", "1")
}

// Open opens the existing group name under the root (a job recovered
// after a restart of pbs_mom).
func (r *Root) Open(name string) (*Group, error) {
	return open(filepath.Join(r.dir, groupName(name)))
}

// OpenPath opens the group whose directory is p.
func OpenPath(p string) (*Group, error) { return open(p) }

func open(p string) (*Group, error) {
	d, err := os.OpenFile(p, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		d.Close()
		return nil, fmt.Errorf("cgroup: %s: %w", p, err)
	}
	return &Group{path: p, dir: d, ino: st.Ino}, nil
}

// Path returns the group's directory.
func (g *Group) Path() string { return g.path }

// FD returns a descriptor of the group's directory, for starting a
// process in the group (syscall.SysProcAttr.CgroupFD).
func (g *Group) FD() int { return int(g.dir.Fd()) }

func (g *Group) write(file, value string) error {
	fd, err := unix.Openat(g.FD(), file, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cgroup: %s/%s: %w", g.path, file, err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(value)); err != nil {
		return fmt.Errorf("cgroup: write %s/%s: %w", g.path, file, err)
	}
	return nil
}

func (g *Group) read(file string) ([]byte, error) {
	fd, err := unix.Openat(g.FD(), file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %s/%s: %w", g.path, file, err)
	}
	f := os.NewFile(uintptr(fd), file)
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("cgroup: read %s/%s: %w", g.path, file, err)
	}
	return b, nil
}

// Stats is what a group's files say of its processes, those gone
// included.
type Stats struct {
	CPU      time.Duration // cpu.stat usage_usec
	MemPeak  uint64        // memory.peak (memory.current where there is no peak); 0 without the memory controller
	MemMax   uint64        // memory.max; 0 when unlimited or unknown
	OOMKills int64         // memory.events oom_kill
}

// Stats reads the group's usage.
func (g *Group) Stats() (Stats, error) {
	var s Stats
	b, err := g.read("cpu.stat")
	if err != nil {
		return s, err
	}
	if v, ok := parseKeyed(b)["usage_usec"]; ok {
		s.CPU = time.Duration(v) * time.Microsecond
	}
	if b, err := g.read("memory.peak"); err == nil {
		s.MemPeak, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	} else if b, err := g.read("memory.current"); err == nil {
		s.MemPeak, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	if b, err := g.read("memory.max"); err == nil {
		s.MemMax, _ = strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	}
	if b, err := g.read("memory.events"); err == nil {
		s.OOMKills = int64(parseKeyed(b)["oom_kill"])
	}
	return s, nil
}

// parseKeyed parses a flat keyed file ("key value" lines, as cpu.stat and
// memory.events); malformed lines are skipped.
func parseKeyed(b []byte) map[string]uint64 {
	out := map[string]uint64{}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		f := strings.Fields(string(line))
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// Procs returns the process ids in the group.
func (g *Group) Procs() ([]int, error) {
	b, err := g.read("cgroup.procs")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}

// Kill sends SIGKILL to every process in the group: through cgroup.kill
// where the kernel has it (5.14), else to each process cgroup.procs lists.
func (g *Group) Kill() error {
	if err := g.write("cgroup.kill", "1"); err == nil {
		return nil
	}
	pids, err := g.Procs()
	if err != nil {
		return err
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return nil
}

// Remove closes the group and removes its directory, waiting up to a
// second for killed processes to leave it. A directory that is no longer
// the group's (removed and made again by someone else) is left alone.
func (g *Group) Remove() error {
	defer g.dir.Close()
	var st unix.Stat_t
	if err := unix.Stat(g.path, &st); err != nil || st.Ino != g.ino {
		return nil
	}
	var err error
	for range 20 {
		if err = unix.Rmdir(g.path); err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("cgroup: remove %s: %w", g.path, err)
}

// Close releases the group's descriptor without removing it.
func (g *Group) Close() error { return g.dir.Close() }

// Probe checks that a process can be started in a group of the root (the
// kernel's clone3 CLONE_INTO_CGROUP, Linux 5.7): it runs /bin/true in a
// group of its own and removes the group.
func (r *Root) Probe() error {
	g, err := r.Create(".probe-"+strconv.Itoa(os.Getpid()), 0)
	if err != nil {
		return err
	}
	defer g.Remove()
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.FD()}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cgroup: start a process in %s: %w", g.Path(), err)
	}
	return nil
}
