package server

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/state"
)

// depEntry is one dependency type with its arguments (job ids, or a count
// for on/synccount).
type depEntry struct {
	typ  string
	args []string
}

// The dependency types, their properties and their mirrors are attr's
// (attr.DependType); the server keeps a type as its name.

// isDepType reports whether t names a dependency type.
func isDepType(t string) bool {
	_, ok := pbsattr.LookupDependType(t)
	return ok
}

// mirror returns the type recorded on the other job of a registration of
// type t (before… for after… and back), or "" when t has none.
func mirror(t string) string {
	if dt, ok := pbsattr.LookupDependType(t); ok {
		if m, ok := dt.Mirror(); ok {
			return m.String()
		}
	}
	return ""
}

// isCountDep reports whether t takes a count (on, synccount).
func isCountDep(t string) bool {
	dt, ok := pbsattr.LookupDependType(t)
	return ok && dt.IsCount()
}

// splitEscaped is state.SplitEscaped.
func splitEscaped(s string, sep byte) []string { return state.SplitEscaped(s, sep) }

// parseDepend decodes a depend value a client sent: its syntax and the
// combination rules (spec 12 §6.1) are attr.ParseDepend's. Job ids get
// "@<server>" when they have none. ok is false for a malformed value
// (PBSE_BADATVAL).
func (s *Server) parseDepend(v string) ([]depEntry, bool) {
	if v != "" {
		if _, err := pbsattr.ParseDepend(v); err != nil {
			return nil, false
		}
	}
	return s.parseDependRaw(v)
}

// parseDependRaw decodes a depend value without the combination rules
// (the server's own bookkeeping, e.g. a sync master's members, breaks
// them).
func (s *Server) parseDependRaw(v string) ([]depEntry, bool) {
	var out []depEntry
	if v == "" {
		return nil, true
	}
	seen := map[string]int{}
	for _, part := range strings.Split(v, ",") {
		fields := splitEscaped(part, ':')
		t := strings.ToLower(fields[0])
		if !isDepType(t) || len(fields) < 2 {
			return nil, false
		}
		e := depEntry{typ: t}
		for _, a := range fields[1:] {
			if a == "" {
				return nil, false
			}
			if isCountDep(t) {
				n, err := strconv.Atoi(a)
				if err != nil || n < 0 || len(fields) != 2 {
					return nil, false
				}
				e.args = append(e.args, strconv.Itoa(n))
				continue
			}
			if !strings.Contains(a, "@") {
				if !strings.Contains(a, ".") {
					return nil, false
				}
				a += "@" + s.name
			}
			e.args = append(e.args, a)
		}
		if i, ok := seen[t]; ok {
			out[i].args = append(out[i].args, e.args...)
			continue
		}
		seen[t] = len(out)
		out = append(out, e)
	}
	return out, true
}

func formatDepend(deps []depEntry) string {
	var b strings.Builder
	for i, e := range deps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.typ)
		for _, a := range e.args {
			b.WriteByte(':')
			b.WriteString(strings.ReplaceAll(a, ":", "\\:"))
		}
	}
	return b.String()
}

// localJobID strips "@<this server>" from a dependency argument; ok is
// false for a job on another server.
func (s *Server) localJobID(arg string) (string, bool) {
	id, srv, found := strings.Cut(arg, "@")
	if found && !strings.EqualFold(srv, s.name) {
		return "", false
	}
	return id, true
}

func (s *Server) jobDeps(j *state.Job) []depEntry {
	d, _ := s.parseDependRaw(j.Attrs.Get(pbsattr.JobDepend))
	return d
}

func (s *Server) setDeps(j *state.Job, deps []depEntry) {
	var kept []depEntry
	for _, e := range deps {
		if len(e.args) > 0 {
			kept = append(kept, e)
		}
	}
	j.Attrs.Set(pbsattr.JobDepend, formatDepend(kept))
}

// addDep records arg under type t on j.
func (s *Server) addDep(j *state.Job, t, arg string) {
	deps := s.jobDeps(j)
	for i := range deps {
		if deps[i].typ == t {
			if !contains(deps[i].args, arg) {
				deps[i].args = append(deps[i].args, arg)
			}
			s.setDeps(j, deps)
			return
		}
	}
	s.setDeps(j, append(deps, depEntry{typ: t, args: []string{arg}}))
}

// removeDep removes arg from type t on j.
func (s *Server) removeDep(j *state.Job, t, arg string) {
	deps := s.jobDeps(j)
	for i := range deps {
		if deps[i].typ == t {
			for k, a := range deps[i].args {
				if a == arg {
					deps[i].args = append(deps[i].args[:k:k], deps[i].args[k+1:]...)
					break
				}
			}
		}
	}
	s.setDeps(j, deps)
}

// dependHolds reports whether any dependency of j keeps it on system hold
// (spec 12 §6.3).
func dependHolds(s *Server, j *state.Job) bool {
	for _, e := range s.jobDeps(j) {
		switch e.typ {
		case "on":
			if n, _ := strconv.Atoi(e.args[0]); n > 0 {
				return true
			}
		case "after", "afterok", "afternotok", "afterany", "syncwith", "synccount",
			"afterstartarray", "afterokarray", "afternotokarray", "afteranyarray":
			return true
		}
	}
	return false
}

// registerDeps performs the registrations of a job entering an execution
// queue and returns the other jobs it modified. Rejected registrations
// drop the dependency, as TORQUE does.
func (s *Server) registerDeps(j *state.Job) (changed []*state.Job) {
	deps := s.jobDeps(j)
	if len(deps) == 0 {
		return nil
	}
	self := j.ID + "@" + s.name
	userHold := false
	changed = s.syncOpen(j)
	for i := range deps {
		e := &deps[i]
		if isCountDep(e.typ) {
			continue
		}
		var keep []string
		for _, arg := range e.args {
			pid, local := s.localJobID(arg)
			if e.typ == "syncwith" {
				// sync sets: sync_sets.go
				if !local {
					keep = append(keep, arg)
					s.syncRegisterRemote(j, arg)
					continue
				}
				if p := s.findJob(pid); p != nil && p != j {
					c, code := s.syncRegisterLocal(p, j)
					changed = append(changed, c...)
					if code == 0 {
						keep = append(keep, arg)
						continue
					}
				}
			}
			var p *state.Job
			if local {
				p = s.findJob(stripArrayCount(pid))
			}
			code := s.registerOne(j, p, e.typ, self)
			switch code {
			case 0:
				keep = append(keep, arg)
				changed = append(changed, p)
			case batchreq.PBSE_BADDEPEND:
				s.registrationRefused(j, pid, code)
			default:
				// Spec 12 §6.2: a user hold for every refusal but
				// BADSTATE.
				s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "Job held for unknown job dep, use 'qrls' to release")
				if code != batchreq.PBSE_BADSTATE {
					userHold = true
				}
			}
		}
		e.args = keep
	}
	s.setDeps(j, keepSyncReleased(deps, s.jobDeps(j)))
	if userHold {
		j.Hold |= state.HoldUser
	}
	return changed
}

// registrationRefused handles the refusal of child j's registration by
// its parent job parent (code PBSE_BADDEPEND: a before* registration
// against a job without on:N). Capture 82 shows what TORQUE does, and the
// captures beat spec 12 §6.2's prose: the refusal is logged as a rejected
// RegisterDependency request, the child logs "Dependency request for job
// rejected by <parent>", gets a user hold (Hold_Types u) and an abort mail
// to its owner, and keeps its state: the hold comes after the state was
// computed, so a queued job stays queued and is run by the scheduler. The
// hold is real for everything that re-evaluates the state later (qhold,
// qrls of another hold, qalter, a requeue), and qrls -h u releases it.
func (s *Server) registrationRefused(j *state.Job, parent string, code int) {
	s.log.Logf(logline.EventDebug, logline.ClassRequest, "req_reject", "Reject reply code=%d(%s), aux=0, type=%s, from %s@%s",
		code, batchreq.ErrorText(code), batchreq.RequestName(batchreq.PBS_BATCH_RegistDep), j.OwnerUser(), s.name)
	msg := "Dependency request for job rejected by " + parent
	s.log.Log(logline.EventJob, logline.ClassJob, j.ID, msg)
	j.Hold |= state.HoldUser
	if j.State != pbsattr.StateRunning {
		j.LateHold |= state.HoldUser
	}
	if s.run == nil {
		return
	}
	if m := s.mailJob(j, 'a', false, msg); m != nil {
		go s.sendMail(j.ID, m) // the caller holds s.mu
	}
}

// registerOne registers child j's dependency of type t on parent p.
func (s *Server) registerOne(j, p *state.Job, t, self string) int {
	if p == nil {
		return batchreq.PBSE_UNKJOBID
	}
	if p == j {
		return batchreq.PBSE_IVALREQ
	}
	switch {
	case strings.HasPrefix(t, "after"):
		if p.State == pbsattr.StateComplete {
			return batchreq.PBSE_BADSTATE
		}
		s.addDep(p, mirror(t), self)
		s.touch(p)
	case strings.HasPrefix(t, "before"):
		if p.OwnerUser() != j.OwnerUser() {
			return batchreq.PBSE_PERM
		}
		deps := s.jobDeps(p)
		for i := range deps {
			if deps[i].typ == "on" {
				n, _ := strconv.Atoi(deps[i].args[0])
				if n <= 0 {
					break
				}
				n--
				if n == 0 {
					deps[i].args = nil
				} else {
					deps[i].args[0] = strconv.Itoa(n)
				}
				s.setDeps(p, deps)
				s.addDep(p, mirror(t), self)
				s.touch(p)
				return 0
			}
		}
		return batchreq.PBSE_BADDEPEND
	case t == "syncwith":
		deps := s.jobDeps(p)
		for _, e := range deps {
			if e.typ == "synccount" {
				s.addDep(p, "syncwith", self)
				s.touch(p)
				return 0
			}
		}
		return batchreq.PBSE_NOSYNCMSTR
	}
	return 0
}

// releaseDepHold clears the system hold of a job whose dependencies no
// longer hold it.
func (s *Server) releaseDepHold(j *state.Job) {
	if j.Hold&state.HoldSystem != 0 && !dependHolds(s, j) {
		j.Hold &^= state.HoldSystem
		if j.Substate == pbsattr.SubDepnHold || j.Substate == pbsattr.SubSyncHold {
			j.Substate = pbsattr.SubHeld
		}
		s.evaluate(j)
		s.touch(j)
	}
}

// parentGone releases or deletes the dependents of a job that ends
// without running (deleted while queued): afterany children are
// released, afterok children deleted, afternotok children released.
// It returns jobs to save and jobs to delete.
func (s *Server) parentGone(p *state.Job, ok bool) (changed, doomed []*state.Job) {
	self := p.ID + "@" + s.name
	changed, doomed = s.syncGone(p)
	for _, e := range s.jobDeps(p) {
		for _, arg := range e.args {
			id, local := s.localJobID(arg)
			if !local {
				continue
			}
			c := s.findJob(id)
			if c == nil {
				continue
			}
			release := false
			switch e.typ {
			case "beforeany":
				release = true
			case "beforeok":
				release = ok
			case "beforenotok":
				release = !ok
			default:
				// synccount and syncwith: syncGone
				continue
			}
			s.removeDep(c, mirror(e.typ), self)
			if release {
				s.releaseDepHold(c)
				changed = append(changed, c)
			} else {
				doomed = append(doomed, c)
			}
		}
	}
	return changed, doomed
}

// arrayThreshold returns the count of an array dependency argument
// "<n>[][<count>].server" (0 = the whole array).
func arrayThreshold(arg string) int {
	i := strings.Index(arg, "][")
	if i < 0 {
		return 0
	}
	rest := arg[i+2:]
	k := strings.IndexByte(rest, ']')
	if k < 0 {
		return 0
	}
	n, _ := strconv.Atoi(rest[:k])
	return n
}

// arrayEnded counts one ended sub-job of array template p (ok: exit 0)
// and releases or deletes the jobs depending on the array (spec 12 §6.4:
// …okarray against sub-jobs ended with 0, …notokarray against non-zero,
// …anyarray against all ended; the optional [count] is the threshold).
func (s *Server) arrayEnded(p *state.Job, ok bool) (changed, doomed []*state.Job) {
	if ok {
		p.Array.OK++
	} else {
		p.Array.NotOK++
	}
	total := p.Array.Size
	done := p.Array.OK + p.Array.NotOK
	for _, e := range s.jobDeps(p) {
		var have int
		switch e.typ {
		case "beforeokarray":
			have = p.Array.OK
		case "beforenotokarray":
			have = p.Array.NotOK
		case "beforeanyarray":
			have = done
		default:
			continue
		}
		for _, arg := range e.args {
			id, local := s.localJobID(arg)
			c := s.findJob(id)
			if !local || c == nil {
				continue
			}
			thr := total
			for _, ce := range s.jobDeps(c) {
				if ce.typ == mirror(e.typ) {
					for _, a := range ce.args {
						if strings.HasPrefix(a, jobIDSeq(p.ID)+"[]") {
							if n := arrayThreshold(a); n > 0 {
								thr = n
							}
						}
					}
				}
			}
			switch {
			case have >= thr:
				s.removeArrayDep(c, mirror(e.typ), p)
				s.removeDep(p, e.typ, arg)
				s.releaseDepHold(c)
				changed = append(changed, c)
			case done >= total:
				s.removeDep(p, e.typ, arg)
				doomed = append(doomed, c)
			}
		}
	}
	return changed, doomed
}

// removeArrayDep drops child c's dependency of type t on array p.
func (s *Server) removeArrayDep(c *state.Job, t string, p *state.Job) {
	deps := s.jobDeps(c)
	prefix := jobIDSeq(p.ID) + "[]"
	for i := range deps {
		if deps[i].typ != t {
			continue
		}
		var keep []string
		for _, a := range deps[i].args {
			if !strings.HasPrefix(a, prefix) {
				keep = append(keep, a)
			}
		}
		deps[i].args = keep
	}
	s.setDeps(c, deps)
}

// stripArrayCount turns "21[][2].srv" into "21[].srv".
func stripArrayCount(id string) string {
	i := strings.Index(id, "][")
	if i < 0 {
		return id
	}
	k := strings.IndexByte(id[i+2:], ']')
	if k < 0 {
		return id
	}
	return id[:i+1] + id[i+2+k+1:]
}

// jobStarted releases the jobs waiting for j to start (spec 12 §6.4):
// children recorded under "before" on j, and afterstartarray children of
// j's array once enough sub-jobs started. The run path calls it after a
// successful launch, with s.mu held; it returns the jobs to save.
func (s *Server) jobStarted(j *state.Job) []*state.Job {
	var changed []*state.Job
	self := j.ID + "@" + s.name
	for _, e := range s.jobDeps(j) {
		if e.typ != "before" {
			continue
		}
		for _, arg := range e.args {
			id, local := s.localJobID(arg)
			c := s.findJob(id)
			if !local || c == nil {
				continue
			}
			s.removeDep(c, "after", self)
			s.removeDep(j, "before", arg)
			s.releaseDepHold(c)
			changed = append(changed, c)
		}
	}
	p := j.Parent
	if p == nil || p.Array == nil {
		return changed
	}
	p.Array.Started++
	for _, e := range s.jobDeps(p) {
		if e.typ != "beforestartarray" {
			continue
		}
		for _, arg := range e.args {
			id, local := s.localJobID(arg)
			c := s.findJob(id)
			if !local || c == nil {
				continue
			}
			thr := p.Array.Size
			for _, ce := range s.jobDeps(c) {
				if ce.typ == "afterstartarray" {
					for _, a := range ce.args {
						if strings.HasPrefix(a, jobIDSeq(p.ID)+"[]") {
							if n := arrayThreshold(a); n > 0 {
								thr = n
							}
						}
					}
				}
			}
			if p.Array.Started >= thr {
				s.removeArrayDep(c, "afterstartarray", p)
				s.removeDep(p, e.typ, arg)
				s.releaseDepHold(c)
				changed = append(changed, c)
			}
		}
	}
	return append(changed, p)
}
