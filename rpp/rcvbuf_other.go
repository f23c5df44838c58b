//go:build !linux

package rpp

import "net"

// setReadBuffer sets pc's receive buffer to n bytes as far as the
// system allows. Errors only mean a smaller buffer.
func setReadBuffer(pc net.PacketConn, n int) {
	if b, ok := pc.(interface{ SetReadBuffer(int) error }); ok {
		_ = b.SetReadBuffer(n)
	}
}
