package server

import (
	"net"

	"gopbs/internal/debugserve"
)

// startPprof starts the hidden debug listener (package debugserve) if
// GOPBS_PPROF asks for it: the runtime profiles and what the scheduler
// link adds (the durations of the recent scheduling cycles, for
// tools/schedbench). It returns the listener (nil if none) so that
// Shutdown can close it.
func (s *Server) startPprof() net.Listener {
	return debugserve.Start(s.sched.DebugHandlers())
}
