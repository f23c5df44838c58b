//go:build !linux

package store

import "syscall"

// fdatasyncHoldingP makes the log durable. Outside Linux it is an
// ordinary fsync(2) of the file (see sync_linux.go for the Linux version).
func fdatasyncHoldingP(fd uintptr) error {
	return syscall.Fsync(int(fd))
}
