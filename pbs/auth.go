package pbs

import (
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// AuthenUserRequest returns the AuthenticateUser request pbs_iff sends:
// the user to bind to the client connection whose local port is port.
func AuthenUserRequest(user string, port int) []byte {
	return batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, &batchreq.AuthenUser{Port: port}).Append(nil)
}

// DisconnectRequest returns a Disconnect request (header only).
func DisconnectRequest(user string) []byte {
	return batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, user, nil).Append(nil)
}

// ReadReplyCode reads one batch reply from r and returns its code and
// text (the text of a Text choice, else "").
func ReadReplyCode(r io.Reader) (code int, text string, err error) {
	rp, err := batchreq.ReadReply(dis.NewReader(r))
	if err != nil {
		return 0, "", fmt.Errorf("decode reply: %w", err)
	}
	return rp.Code, rp.Text, nil
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
