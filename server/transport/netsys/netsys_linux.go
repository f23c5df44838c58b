//go:build linux

package netsys

import (
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// Accept4 accepts a connection on the listening socket lfd as a
// non-blocking, close-on-exec socket and returns it with its peer.
func Accept4(lfd int) (int, netip.AddrPort, error) {
	var sa unix.RawSockaddrAny
	n := uint32(unsafe.Sizeof(sa))
	fd, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(lfd), uintptr(unsafe.Pointer(&sa)),
		uintptr(unsafe.Pointer(&n)), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if e != 0 {
		return -1, netip.AddrPort{}, e
	}
	return int(fd), sockaddrAddrPort(&sa), nil
}

// sockaddrAddrPort converts a kernel socket address to a netip.AddrPort
// (IPv4-mapped IPv6 addresses unmapped); the zero value for other
// families.
func sockaddrAddrPort(sa *unix.RawSockaddrAny) netip.AddrPort {
	switch sa.Addr.Family {
	case unix.AF_INET:
		p := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(p.Addr), networkPort(p.Port))
	case unix.AF_INET6:
		p := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom16(p.Addr).Unmap(), networkPort(p.Port))
	}
	return netip.AddrPort{}
}

// networkPort returns a port stored in network byte order.
func networkPort(p uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&p))
	return uint16(b[0])<<8 | uint16(b[1])
}

// Read reads what fd has received (EAGAIN: nothing yet).
func Read(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), errnoErr(e)
}

// Send writes b to the socket fd without waiting, without SIGPIPE.
func Send(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT, 0, 0)
	return int(n), errnoErr(e)
}

// Close closes fd.
func Close(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}

// EpollCtl changes the interest of epoll set ep in fd.
func EpollCtl(ep, op, fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(ep), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(&ev)), 0, 0)
	return errnoErr(e)
}

// EpollPoll returns the events ready on ep without waiting.
func EpollPoll(ep int, events []unix.EpollEvent) int {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

// EpollWaitHoldingP waits up to msec milliseconds for events on ep as a
// raw system call: the loop's thread keeps its P while it sleeps, so the
// runtime's monitor neither hands the P to another thread nor wakes every
// 20 µs to consider it. Only for short waits: a stop-the-world of the
// collector waits for the call to end (or a signal to cut it short).
func EpollWaitHoldingP(ep int, events []unix.EpollEvent, msec int) int {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

// EpollWait waits up to msec milliseconds for events on ep. It is an
// ordinary (blocking) system call: the runtime may hand the loop's P to
// other goroutines while the loop sleeps, and a stop-the-world of the
// collector need not wait for the sleep to end.
func EpollWait(ep int, events []unix.EpollEvent, msec int) int {
	n, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

// EventfdSignal adds one to the eventfd fd, waking a loop that waits for it.
func EventfdSignal(fd int) {
	one := uint64(1)
	unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&one)), 8)
}

// EventfdClear resets the eventfd fd.
func EventfdClear(fd int) {
	var v uint64
	unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&v)), 8)
}
