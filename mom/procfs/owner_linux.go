package procfs

import (
	"os"
	"syscall"
)

// ownerUID returns the uid owning a /proc/<pid> directory (the real uid of the
// process), or -1.
func ownerUID(dir string) int {
	fi, err := os.Stat(dir)
	if err != nil {
		return -1
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
