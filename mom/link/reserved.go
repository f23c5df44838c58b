package link

import (
	"context"
	"net"
	"net/netip"

	"gopbs/iff"
)

// DialReserved opens a TCP connection to addr from the first free
// privileged local port counting down from 1023, as TORQUE daemons
// connect to each other (spec 10 §1). It needs root.
func DialReserved(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
	return iff.DialReserved(ctx, addr.String())
}
