//go:build !linux

package transport

import "net"

// The event loop exists on Linux only (netloop_linux.go); elsewhere every
// connection is served by its own goroutine.

// loopConn is the loop's state of a connection; never set here.
type loopConn struct{}

func (*loopConn) write([]byte) {}

// netLoop is the event loop; never made here.
type netLoop struct{}

func newNetLoop(*Transport, net.Listener) *netLoop { return nil }

func (*netLoop) run()  {}
func (*netLoop) stop() {}
