package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
)

// DialReserved opens a TCP connection to addr from the first free
// privileged local port counting down from 1023, as TORQUE daemons
// connect to each other (spec 10 §1). It needs root.
func DialReserved(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
	var last error
	for port := 1023; port >= 512; port-- {
		d := net.Dialer{LocalAddr: &net.TCPAddr{Port: port}}
		c, err := d.DialContext(ctx, "tcp", addr.String())
		if err == nil {
			return c, nil
		}
		last = err
		switch {
		case errors.Is(err, syscall.EADDRINUSE), errors.Is(err, syscall.EADDRNOTAVAIL):
			continue // try the next port
		case errors.Is(err, os.ErrPermission):
			return nil, fmt.Errorf("bind reserved port: %w", err)
		}
		return nil, err
	}
	return nil, fmt.Errorf("no free reserved port: %w", last)
}
