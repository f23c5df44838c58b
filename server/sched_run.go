package server

import (
	"os"
	"path/filepath"

	"gopbs/internal/logline"
	"gopbs/server/link/sched"
	"gopbs/server/schedulers"
	"gopbs/server/store"
)

// schedHost is the server as package schedulers' Supervisor uses it: the
// Supervisor runs the processes of the non-default schedulers and hands
// each running one to the scheduler link (server/link/sched), the one
// cycle runner of every scheduler.
type schedHost struct{ s *Server }

// Run hands a running scheduler to the link and asks it for cycle cmd.
func (h schedHost) Run(sc *schedulers.Sched, cmd int) {
	host := sc.Host
	if host == h.s.name || host == "localhost" {
		host = "127.0.0.1" // the server starts its host's schedulers on loopback
	}
	h.s.sched.Run(sched.Scheduler{Name: sc.Name, Host: host, Port: sc.Port}, cmd)
}

// Stopped takes a scheduler from the link.
func (h schedHost) Stopped(name string) { h.s.sched.Remove(name) }

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
