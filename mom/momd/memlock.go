package momd

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// capIPCLock is the bit of CAP_IPC_LOCK in a capability set.
const capIPCLock = 14

// LockMemory locks the daemon's pages in memory, present and future
// (mlockall(MCL_CURRENT|MCL_FUTURE), each page locked when first
// touched), as TORQUE's pbs_mom does so that it keeps answering when the
// node is swapping ("MemLocked: TRUE  (mlock)" in momctl -d). It does so
// only where it is permitted without limit — the process holds
// CAP_IPC_LOCK or RLIMIT_MEMLOCK is unlimited — because with MCL_FUTURE
// under a finite limit the heap could no longer grow. It reports whether
// memory is locked; an error means the lock was permitted but failed.
// Locks are not inherited across fork or exec, so jobs are not affected.
func LockMemory() (bool, error) {
	if !memlockPermitted() {
		return false, nil
	}
	// MCL_ONFAULT locks pages as they are first touched: the Go
	// runtime maps large heap regions it may never use, which plain
	// MCL_CURRENT|MCL_FUTURE would populate (over 100 MB resident
	// instead of a few). Kernels before 4.4 do not know the flag.
	err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT)
	if errors.Is(err, unix.EINVAL) {
		err = unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE)
	}
	if err != nil {
		return false, fmt.Errorf("mlockall: %w", err)
	}
	return true, nil
}

// memlockPermitted reports whether memory may be locked without limit.
func memlockPermitted() bool {
	var lim unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim) == nil && lim.Cur == unix.RLIM_INFINITY {
		return true
	}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return false
	}
	defer f.Close()
	return hasCapability(f, capIPCLock)
}

// hasCapability reports whether the CapEff line of a /proc/<pid>/status
// text read from r has capability bit c set.
func hasCapability(r interface{ Read([]byte) (int, error) }, c uint) bool {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "CapEff:")
		if !ok {
			continue
		}
		bits, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		return err == nil && bits&(1<<c) != 0
	}
	return false
}
