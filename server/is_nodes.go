package server

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/link/momis"
	"gopbs/server/monitor"
	"gopbs/server/state"
)

// isNodes is the node table as the IS link (server/link/momis) sees it.
type isNodes struct{ s *Server }

var _ momis.Nodes = isNodes{}

// Same implements momis.Nodes.
func (in isNodes) Same(nodes []*state.Node) bool {
	s := in.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(nodes) != len(s.nodes) {
		return false
	}
	for i, n := range s.nodes {
		if n != nodes[i] {
			return false
		}
	}
	return true
}

// List implements momis.Nodes.
func (in isNodes) List() ([]*state.Node, []string) {
	s := in.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	nodes := append([]*state.Node{}, s.nodes...)
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return nodes, names
}

// Count implements momis.Nodes.
func (in isNodes) Count() int {
	s := in.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.nodes)
}

// Down implements momis.Nodes.
func (in isNodes) Down() []string {
	s := in.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	var names []string
	for _, n := range s.nodes {
		if n.State&state.NodeStateDown != 0 {
			names = append(names, n.Name)
		}
	}
	return names
}

// SetState implements momis.Nodes.
func (in isNodes) SetState(name string, f func(int) int) {
	s := in.s
	s.mu.Lock()
	if n := s.nodeByName[name]; n != nil {
		n.State = f(n.State)
	}
	s.mu.Unlock()
}

// Status implements momis.Nodes: the node's status attribute, its state
// as the MOM reports it (state, a health-check error with down_on_error),
// its np with auto_node_np, and the jobs it holds that the server does
// not run there (mom_job_sync).
func (in isNodes) Status(name, status string, items []string) []string {
	s := in.s
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodeByName[name]
	if n == nil {
		return nil
	}
	n.Attrs.Set(pbsattr.NodeStatus, status)
	n.State &^= state.NodeStateNotReported
	errDown := false
	var stray []string
	for _, it := range items {
		k, v, _ := strings.Cut(it, "=")
		switch k {
		case "message":
			errDown = strings.HasPrefix(v, "ERROR") && s.serverFlag(pbsattr.SrvDownOnError)
		case "jobs":
			if s.serverFlag(pbsattr.SrvMomJobSync) {
				stray = s.strayJobs(name, strings.Fields(v))
			}
		case "state":
			switch v {
			case "down":
				n.State |= state.NodeStateDown
			case "busy":
				n.State = n.State&^(state.NodeStateDown|state.NodeStateUnknown) | state.NodeStateBusy
			case "free":
				n.State &^= state.NodeStateDown | state.NodeStateUnknown | state.NodeStateBusy
			default:
				n.State |= state.NodeStateUnknown
				s.log.Logf(logline.EventError, logline.ClassNode, name, "unknown state %q reported", v)
			}
		case "ncpus":
			if s.serverFlag(pbsattr.SrvAutoNodeNP) {
				if x, err := strconv.Atoi(v); err == nil && x > 0 && x != n.NP {
					n.NP = x
				}
			}
		}
	}
	if errDown {
		n.State |= state.NodeStateDown // a health-check error with down_on_error
	}
	return stray
}

// DeleteStray implements momis.Nodes.
func (in isNodes) DeleteStray(name, id string) {
	in.s.run.MomRequest(name, batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, "")
}

// CheckRate implements momis.Nodes.
func (in isNodes) CheckRate() int64 {
	s := in.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.serverLong(pbsattr.SrvNodeCheckRate, momis.DefaultNodeCheckRate)
}

// Silent implements momis.Nodes.
func (in isNodes) Silent(name string, rate int64) {
	s := in.s
	s.mu.Lock()
	if n := s.nodeByName[name]; n != nil && n.State&state.NodeStateDown == 0 {
		n.State |= state.NodeStateDown
		s.obs.MomLinkError(monitor.MomSilent)
		s.log.Logf(logline.EventSystem|logline.EventAdmin, logline.ClassNode, name, "node %s not detected in %d seconds, marking node down", name, rate)
	}
	s.mu.Unlock()
}

// Resolve implements momis.Nodes with the MOM link's resolver.
func (in isNodes) Resolve(name string) []netip.Addr { return in.s.run.Resolve(name) }

// Now implements momis.Nodes.
func (in isNodes) Now() time.Time { return in.s.now() }

// strayJobs returns the job ids a MOM reports that the server does not
// know as running there (mom_job_sync, spec 10 §5.4). Called with s.mu
// held.
func (s *Server) strayJobs(node string, ids []string) []string {
	var out []string
	for _, id := range ids {
		j := s.jobs.Get(id)
		if j == nil || j.State != pbsattr.StateRunning && j.State != pbsattr.StateExiting {
			out = append(out, id)
			continue
		}
		here := false
		for _, x := range state.ExecSlots(j.Attrs.Get(pbsattr.JobExecHost)) {
			if x.Host == node {
				here = true
			}
		}
		if !here {
			out = append(out, id)
		}
	}
	return out
}
