package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/link/mom"
	"gopbs/server/link/sched"
	"gopbs/server/schedulers"
	"gopbs/server/store"
)

// schedHost is the server as package schedulers' Supervisor uses it: it
// drives the cycles of the non-default schedulers (the default one is
// the scheduler link's, sched_link.go).
type schedHost struct{ s *Server }

// Cycle connects to a scheduler, sends it cmd and serves its requests
// with its slice of the cluster until it closes the connection.
func (h schedHost) Cycle(sc *schedulers.Sched, cmd int) (int, bool) {
	s := h.s
	host := sc.Host
	if host == s.name {
		host = "127.0.0.1" // the server starts its host's schedulers on loopback
	}
	ctx, cancel := context.WithTimeout(context.Background(), mom.Timeout)
	nc, err := mom.DialReserved(ctx, net.JoinHostPort(host, strconv.Itoa(sc.Port)))
	cancel()
	if err != nil {
		s.log.Logf(logline.EventSched, logline.ClassServer, sc.Name, "Could not contact Scheduler %s - port %d", sc.Name, sc.Port)
		s.log.Logf(logline.EventSched, logline.ClassServer, sc.Name, "Unable to reach scheduler associated with partition %s", strings.Join(sc.Partitions, ","))
		return 0, false
	}
	if err := batchreq.WriteSchedCommand(nc, cmd); err != nil {
		nc.Close()
		return 0, false
	}
	s.log.Logf(logline.EventSched, logline.ClassServer, sc.Name, "Scheduler %s was sent the command %s", sc.Name, batchreq.SchedCommandName(cmd))
	cy := new(sched.Cycle)
	p, ok := s.peerConn(nc, s.scheds.Slice(sc.Name), cy)
	if !ok {
		return 0, false
	}
	begin := time.Now()
	p.Serve()
	took := time.Since(begin)
	s.obs.SchedCycle(sc.Name, took)
	s.log.Logf(logline.EventSched, logline.ClassServer, sc.Name, "Scheduler %s cycle %s ended after %.3f s, %d jobs run",
		sc.Name, batchreq.SchedCommandName(cmd), took.Seconds(), cy.Started())
	return cy.Started(), true
}

// Events sums the job events of the queues of the partitions.
func (h schedHost) Events(parts []string) int64 {
	s := h.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	var n int64
	for _, q := range s.queues {
		if p := q.Attrs.Get(pbsattr.QueuePartition); p != "" && slices.Contains(parts, p) {
			n += q.Events
		}
	}
	return n
}

// Save makes the Supervisor's changes durable.
func (h schedHost) Save(ops ...store.Op) {
	s := h.s
	s.mu.Lock()
	wait := s.store.Submit(ops...)
	s.mu.Unlock()
	if err := wait(); err != nil {
		s.logError("sched_save", err.Error())
	}
}

// Logf writes a server log line about a scheduler.
func (h schedHost) Logf(name, format string, args ...any) {
	h.s.log.Logf(logline.EventSched|logline.EventAdmin, logline.ClassServer, name, format, args...)
}

// startSchedulers starts the Supervisor of the non-default schedulers.
func (s *Server) startSchedulers() {
	cmd := s.cfg.SchedCommand
	if cmd == "" {
		if exe, err := os.Executable(); err == nil {
			cmd = filepath.Join(filepath.Dir(exe), "pbs_sched")
		}
	}
	sv := schedulers.NewSupervisor(s.scheds, schedHost{s}, schedulers.RunConfig{
		Command: cmd, Home: s.cfg.Home, RMPort: s.cfg.RMPort,
		Local: func(h string) bool { return h == s.name || h == "localhost" || h == "127.0.0.1" },
	})
	s.schedRun = sv
	s.schedSuper = sv
	sv.Start()
}

// stopSchedulers ends the Supervisor; after qterm -s (Shutdown with
// SHUT_WHO_SCHED) the scheduler processes are stopped too.
func (s *Server) stopSchedulers() {
	if s.schedSuper != nil {
		s.schedSuper.Stop(s.killScheds.Load())
	}
}
