//go:build linux

package store

import (
	"runtime"
	"syscall"
)

// fdatasyncHoldingP makes the log durable with fdatasync(2). With two
// or more Ps it issues the call as a raw system call, which the Go
// scheduler does not see as blocking: the thread keeps its P while the
// disk syncs instead of having sysmon hand the P to another thread after
// 20 µs and take it back afterwards. On a 2-vCPU machine those hand-offs
// (thread wake-ups and context switches on every commit) cost more than
// the P is worth during a sync: pbsbench's submission rate was about
// 14 % higher in six A/B runs (docs/performance.md §1). The other Ps keep
// running goroutines meanwhile; with a single P (nothing else could run)
// the ordinary blocking call is used.
func fdatasyncHoldingP(fd uintptr) error {
	if runtime.GOMAXPROCS(0) < 2 {
		return syscall.Fdatasync(int(fd))
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_FDATASYNC, fd, 0, 0); e != 0 {
		return e
	}
	return nil
}
