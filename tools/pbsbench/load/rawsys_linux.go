//go:build linux

package load

import (
	"fmt"
	"net"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The raw submitter's system calls, made as raw system calls: the
// runtime is not told that the thread enters the kernel, so its P stays
// with the submitter's goroutine, no other thread is woken to take it
// over while a call runs (a loopback write or connect runs the peer's
// TCP input too and can take tens of microseconds), and the runtime's
// monitor thread finds nothing to do. None of these calls blocks for
// long: sockets are read with MSG_DONTWAIT, and the only wait, in
// epoll_wait, is bounded by its timeout.

// sockAddr is a socket address in the kernel's form.
type sockAddr struct {
	in4 unix.RawSockaddrInet4
	in6 unix.RawSockaddrInet6
	v6  bool
}

// newSockAddr returns the address of ip (nil: any) and port.
func newSockAddr(ip net.IP, port int, v6 bool) *sockAddr {
	a := &sockAddr{v6: v6}
	if v6 {
		a.in6.Family = unix.AF_INET6
		putPort(&a.in6.Port, port)
		copy(a.in6.Addr[:], ip.To16())
	} else {
		a.in4.Family = unix.AF_INET
		putPort(&a.in4.Port, port)
		if ip != nil {
			copy(a.in4.Addr[:], ip.To4())
		}
	}
	return a
}

// putPort stores port in network byte order.
func putPort(p *uint16, port int) {
	b := (*[2]byte)(unsafe.Pointer(p))
	b[0], b[1] = byte(port>>8), byte(port)
}

func (a *sockAddr) raw() (uintptr, uintptr) {
	if a.v6 {
		return uintptr(unsafe.Pointer(&a.in6)), unsafe.Sizeof(a.in6)
	}
	return uintptr(unsafe.Pointer(&a.in4)), unsafe.Sizeof(a.in4)
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func sysSocket(family int) (int, error) {
	fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	return int(fd), errnoErr(e)
}

func sysSetsockoptInt(fd, level, opt, v int) error {
	x := int32(v)
	_, _, e := unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&x)), 4, 0)
	return errnoErr(e)
}

func sysBind(fd int, a *sockAddr) error {
	p, n := a.raw()
	_, _, e := unix.RawSyscall(unix.SYS_BIND, uintptr(fd), p, n)
	return errnoErr(e)
}

// sysConnect connects fd, waiting for the end of a connection a signal
// interrupted.
func sysConnect(fd int, a *sockAddr) error {
	p, n := a.raw()
	_, _, e := unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), p, n)
	for e == unix.EINTR || e == unix.EALREADY {
		_, _, e = unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), p, n)
		if e == unix.EISCONN {
			return nil
		}
	}
	return errnoErr(e)
}

// sysLocalPort returns the local port of fd.
func sysLocalPort(fd int) (int, error) {
	var sa unix.RawSockaddrAny
	n := uint32(unsafe.Sizeof(sa))
	_, _, e := unix.RawSyscall(unix.SYS_GETSOCKNAME, uintptr(fd), uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return 0, e
	}
	var port uint16
	switch sa.Addr.Family {
	case unix.AF_INET:
		port = (*unix.RawSockaddrInet4)(unsafe.Pointer(&sa)).Port
	case unix.AF_INET6:
		port = (*unix.RawSockaddrInet6)(unsafe.Pointer(&sa)).Port
	default:
		return 0, unix.EAFNOSUPPORT
	}
	b := (*[2]byte)(unsafe.Pointer(&port))
	return int(b[0])<<8 | int(b[1]), nil
}

func sysEpollCtl(ep, op, fd int, ev *unix.EpollEvent) error {
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(ep), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0)
	return errnoErr(e)
}

// epollWait waits at most msec milliseconds for events on ep. The wait
// is short so that a stop-the-world of the collector, which waits for
// the raw call to return, is not held up long.
func epollWait(ep int, events []unix.EpollEvent, msec int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), uintptr(msec), 0, 0)
	return int(n), errnoErr(e)
}

// sysSend writes all of b to fd.
func sysSend(fd int, b []byte) error {
	for len(b) > 0 {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return fmt.Errorf("send: %w", e)
		}
		b = b[n:]
	}
	return nil
}

// sysRecv reads what fd has received without waiting (EAGAIN: nothing).
func sysRecv(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)),
		unix.MSG_DONTWAIT, 0, 0)
	return int(n), errnoErr(e)
}

func sysClose(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}
