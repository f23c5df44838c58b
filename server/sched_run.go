package server

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

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
	if schedHostsOf(h.s.cfg.Home, h.s.name).local(host) {
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
	hosts := schedHostsOf(s.cfg.Home, s.name)
	sv := schedulers.NewSupervisor(s.scheds, schedHost{s}, schedulers.RunConfig{
		Command: cmd, Home: s.cfg.Home, RMPort: s.cfg.RMPort, Local: hosts.local,
		Self: hosts.self, Peers: hosts.peers(), Primary: hosts.primary(),
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

// schedHosts is where this server stands among the hosts of sched
// objects: the host it runs on and its failover group (the lines of
// server_name, as the clients read them, docs/failover.md), whose
// servers share one server name.
type schedHosts struct {
	name, self string
	group      []string // the group's hosts, the primary first; nil without a group
}

// schedHostsOf returns the schedHosts of the server of PBS_HOME home
// named name.
func schedHostsOf(home, name string) schedHosts {
	self, _ := os.Hostname()
	h := schedHosts{name: name, self: self}
	b, err := os.ReadFile(filepath.Join(home, "server_name"))
	if err != nil {
		return h
	}
	for _, line := range strings.Split(string(b), "\n") {
		host, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		if host != "" && !slices.ContainsFunc(h.group, func(g string) bool { return sameSchedHost(g, host) }) {
			h.group = append(h.group, host)
		}
	}
	if len(h.group) < 2 {
		h.group = nil
	}
	return h
}

// sameSchedHost reports whether two host names name one host: equal
// (letter case aside) or one the short form of the other.
func sameSchedHost(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	sa, _, _ := strings.Cut(a, ".")
	sb, _, _ := strings.Cut(b, ".")
	return strings.EqualFold(sa, sb) && (sa == a || sb == b)
}

// local reports whether a scheduler of host h runs on this server's host
// (on loopback). In a failover group the shared server name is no host.
func (h schedHosts) local(host string) bool {
	switch {
	case host == "localhost" || host == "127.0.0.1" || h.self != "" && sameSchedHost(host, h.self):
		return true
	case h.group == nil:
		return host == h.name
	}
	return false
}

// peers returns the other hosts of the failover group.
func (h schedHosts) peers() []string {
	var out []string
	for _, g := range h.group {
		if !sameSchedHost(g, h.self) {
			out = append(out, g)
		}
	}
	return out
}

// primary reports whether this server is its group's first.
func (h schedHosts) primary() bool { return h.group == nil || sameSchedHost(h.group[0], h.self) }
