package schedulers

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// portOpen reports whether something accepts connections on a loopback
// port.
func portOpen(p int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// lockPID returns the pid a scheduler wrote into its lock file
// (sched_priv/sched.lock), or 0.
func lockPID(priv string) int {
	b, err := os.ReadFile(filepath.Join(priv, "sched.lock"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0
	}
	return pid
}

// livePID returns the first pid of a live process found in the lock files
// of privs (sched_priv directories, in order), or 0.
func livePID(privs ...string) int {
	for _, priv := range privs {
		if pid := lockPID(priv); pid > 0 && syscall.Kill(pid, 0) == nil {
			return pid
		}
	}
	return 0
}
