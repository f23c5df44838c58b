package pbs

import (
	"net"
	"syscall"
	"time"

	"gopbs/batchreq"
)

// DisconnectRequest returns a Disconnect request (header only).
func DisconnectRequest(user string) []byte {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, user, nil).Append(nil)
}

// DialReserved connects to addr from a reserved (privileged) local port,
// trying the ports from 1023 down to 512 as bindresvport does. It fails
// with EACCES when the process may not bind such ports.
func DialReserved(addr string, timeout time.Duration) (net.Conn, error) {
	var lastErr error
	for port := 1023; port >= 512; port-- {
		d := net.Dialer{
			Timeout:   timeout,
			LocalAddr: &net.TCPAddr{Port: port},
			Control: func(network, address string, c syscall.RawConn) error {
				var serr error
				err := c.Control(func(fd uintptr) {
					serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
				})
				if err != nil {
					return err
				}
				return serr
			},
		}
		nc, err := d.Dial("tcp4", addr)
		if err == nil {
			return nc, nil
		}
		lastErr = err
		var en syscall.Errno
		if asErrnoIn(err, &en) && (en == syscall.EADDRINUSE || en == syscall.EADDRNOTAVAIL) {
			continue
		}
		return nil, err
	}
	return nil, lastErr
}
