package rpp

import (
	"net"
	"syscall"
)

// setReadBuffer sets pc's receive buffer to n bytes: beyond
// net.core.rmem_max where the process may (SO_RCVBUFFORCE needs
// CAP_NET_ADMIN), else as far as the limit allows. Errors only mean a
// smaller buffer.
func setReadBuffer(pc net.PacketConn, n int) {
	if sc, ok := pc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUFFORCE, n)
			}); err == nil && serr == nil {
				return
			}
		}
	}
	if b, ok := pc.(interface{ SetReadBuffer(int) error }); ok {
		_ = b.SetReadBuffer(n)
	}
}
