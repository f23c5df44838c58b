package e2e

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Programs is a directory of programs built from the module.
type Programs struct {
	// Dir is the directory; the programs' pbs.SbinDir is set to it, so
	// that the clients among them find the pbs_iff beside them.
	Dir string
}

// Path returns the path of the program called name.
func (p Programs) Path(name string) string { return filepath.Join(p.Dir, name) }

// Package returns the import path (relative to the module root) of the
// main package that builds the program called name: the daemons are
// server/cmd/pbs_server, mom/cmd/pbs_mom and sched/cmd/pbs_sched, every
// other program is tools/<name>.
func Package(name string) string {
	switch name {
	case "pbs_server":
		return "./server/cmd/pbs_server"
	case "pbs_mom":
		return "./mom/cmd/pbs_mom"
	case "pbs_sched":
		return "./sched/cmd/pbs_sched"
	}
	return "./tools/" + name
}

// Build builds the programs called name (see Package) into a directory
// the whole test binary shares and returns it. Each program is built at
// most once per test binary; later calls only build what is missing.
// pbs_iff is made setuid root (so Build skips the test unless it runs as
// root when pbs_iff is among the names). A failed build fails the test,
// and every later test that needs that program.
func Build(t testing.TB, names ...string) Programs {
	t.Helper()
	return BuildVars(t, nil, names...)
}

// BuildVars is Build with string variables of the programs set at link
// time (-ldflags -X, keyed by import path and name, e.g.
// "gopbs/pbs.DefaultPort"). Programs built with different variables go to
// different directories.
func BuildVars(t testing.TB, vars map[string]string, names ...string) Programs {
	t.Helper()
	if slices.Contains(names, "pbs_iff") {
		RequireRoot(t, "pbs_iff is setuid root")
	}
	b, err := builds.get(vars)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.build(names); err != nil {
		t.Fatal(err)
	}
	return Programs{Dir: b.dir}
}

// RemoveBuilds removes every directory Build made in this test binary.
// Call it from TestMain after the tests have run.
func RemoveBuilds() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	for key, b := range builds.dirs {
		os.RemoveAll(b.dir)
		delete(builds.dirs, key)
	}
}

// builds holds the build directories of the test binary, one per set of
// link-time variables. It is the package's only state: building once per
// test binary is its purpose.
var builds = buildCache{dirs: map[string]*buildDir{}}

type buildCache struct {
	mu    sync.Mutex
	swept bool
	dirs  map[string]*buildDir // by linkFlags
}

// buildDirPrefix starts the names of build directories; the process id
// follows, so that a later test binary can tell a directory whose test
// binary is gone.
const buildDirPrefix = "gopbs-e2e-bin-"

func (c *buildCache) get(vars map[string]string) (*buildDir, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.swept {
		c.swept = true
		sweepBuildDirs(os.TempDir())
	}
	flags := linkFlags(vars)
	if b := c.dirs[flags]; b != nil {
		return b, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", buildDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("build directory: %w", err)
	}
	// programs run as test users (the MOM's job starter, the clients)
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, fmt.Errorf("build directory: %w", err)
	}
	b := &buildDir{root: root, dir: dir, flags: flags + " -X gopbs/pbs.SbinDir=" + dir, done: map[string]error{}}
	c.dirs[flags] = b
	return b, nil
}

// linkFlags renders vars as -X flags in a stable order.
func linkFlags(vars map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		parts = append(parts, "-X "+k+"="+vars[k])
	}
	return strings.Join(parts, " ")
}

// sweepBuildDirs removes the build directories in tmp of test binaries
// that are no longer running.
func sweepBuildDirs(tmp string) {
	entries, _ := os.ReadDir(tmp)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), buildDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || processExists(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
}

// processExists reports whether a process with id pid runs.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// buildDir is one directory of built programs.
type buildDir struct {
	root, dir, flags string

	mu   sync.Mutex
	done map[string]error // program name → result of its build
}

// build builds the programs of names not built before, in one go build.
func (b *buildDir) build(names []string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var missing []string
	for _, n := range names {
		if _, ok := b.done[n]; !ok && !slices.Contains(missing, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		err := b.run(missing)
		for _, n := range missing {
			b.done[n] = err
		}
	}
	for _, n := range names {
		if err := b.done[n]; err != nil {
			return err
		}
	}
	return nil
}

func (b *buildDir) run(names []string) error {
	args := []string{"build", "-buildvcs=false", "-ldflags", b.flags, "-o", b.dir + "/"}
	for _, n := range names {
		args = append(args, Package(n))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = b.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", strings.Join(names, " "), err, out)
	}
	if slices.Contains(names, "pbs_iff") {
		iff := filepath.Join(b.dir, "pbs_iff")
		if err := os.Chown(iff, 0, 0); err != nil {
			return fmt.Errorf("pbs_iff: %w", err)
		}
		if err := os.Chmod(iff, 0o755|os.ModeSetuid); err != nil {
			return fmt.Errorf("pbs_iff: %w", err)
		}
	}
	return nil
}
