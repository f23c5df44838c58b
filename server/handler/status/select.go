package server

import (
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/state"
)

// selector is one decoded selection criterion.
type selector struct {
	idx  int
	res  string
	typ  pbsattr.Type
	val  string
	op   int
	attr *batchreq.Attr
}

func (s *Server) handleSelect(c *conn, req *batchreq.Request) {
	body := req.Body.(*batchreq.Select)
	ext := strings.ToLower(req.Extension)
	summarize := strings.Contains(ext, "summarize_arrays")
	execOnly := strings.Contains(ext, "exec_queue_only")
	var sels []selector
	var queue string
	for i := range body.Attrs {
		a := &body.Attrs[i]
		if strings.EqualFold(a.Name, "destination") {
			queue = a.Value
			if k := strings.IndexByte(queue, '@'); k >= 0 {
				queue = queue[:k]
			}
			continue
		}
		idx := state.JobDefs.Find(a.Name)
		if idx < 0 || idx == state.UnknownJobAttr {
			c.rejectAttr(batchreq.PBSE_NOATTR, a)
			return
		}
		d := state.JobDefs.Defs[idx]
		if a.Op < batchreq.EQ || a.Op > batchreq.LT {
			c.rejectAttr(batchreq.PBSE_IVALREQ, a)
			return
		}
		if d.Flags&pbsattr.FlagSelEQ != 0 && a.Op != batchreq.EQ && a.Op != batchreq.NE {
			c.rejectAttr(batchreq.PBSE_IVALREQ, a)
			return
		}
		sel := selector{idx: idx, typ: d.Type, op: a.Op, attr: a, val: a.Value}
		switch {
		case idx == pbsattr.JobState || idx == pbsattr.JobUserList:
		case d.Type == pbsattr.TypeResourceList:
			rd, ok := state.Resources[strings.ToLower(a.Resource)]
			if !ok {
				c.rejectAttr(batchreq.PBSE_UNKRESC, a)
				return
			}
			sel.res, sel.typ = strings.ToLower(a.Resource), rd.Type
			v, ok := state.DecodeValue(rd.Type, a.Value)
			if !ok {
				c.rejectAttr(batchreq.PBSE_BADATVAL, a)
				return
			}
			sel.val = v
		case d.Type == pbsattr.TypeHold:
			v, ok := state.DecodeValue(d.Type, a.Value)
			if !ok {
				c.rejectAttr(batchreq.PBSE_BADATVAL, a)
				return
			}
			sel.val = v
		default:
			v, ok := state.DecodeValue(d.Type, a.Value)
			if !ok {
				c.rejectAttr(batchreq.PBSE_BADATVAL, a)
				return
			}
			sel.val = v
		}
		sels = append(sels, sel)
	}
	s.mu.RLock()
	var q *state.Queue
	if queue != "" {
		if q = s.queueByName[queue]; q == nil {
			s.mu.RUnlock()
			c.reject(batchreq.PBSE_UNKQUE, "")
			return
		}
	}
	var ids []string
	var jobs []*state.Job
	for j := s.jobs.First(); j != nil; j = j.Next() {
		if summarize && j.Parent != nil || !summarize && j.Array != nil {
			continue
		}
		if q != nil && j.Queue != q || execOnly && (j.Queue == nil || !j.Queue.IsExec()) {
			continue
		}
		if !s.canSee(c, j) || !s.selects(j, sels) {
			continue
		}
		if req.Type == batchreq.PBS_BATCH_SelStat {
			jobs = append(jobs, j)
		} else {
			ids = append(ids, j.ID)
		}
	}
	if req.Type == batchreq.PBS_BATCH_SelStat {
		// The full status of every selected job (the request's
		// attribute list is not consulted), encoded directly: the
		// scheduler selects every job of each queue in every cycle.
		raw := s.encodeJobStatuses(c, jobs, -1)
		s.mu.RUnlock()
		c.sendRaw(raw)
		return
	}
	s.mu.RUnlock()
	c.send(&batchreq.Reply{AuxCode: len(ids), Choice: batchreq.BATCH_REPLY_CHOICE_Select, JobIDs: ids})
}

// selects reports whether a job meets every criterion.
func (s *Server) selects(j *state.Job, sels []selector) bool {
	for _, sel := range sels {
		var match bool
		switch sel.idx {
		case pbsattr.JobState:
			in := strings.Contains(sel.val, j.StateLetter())
			match = in == (sel.op != batchreq.NE)
		case pbsattr.JobUserList:
			in := aclMatchUser(state.ParseArst(sel.val), j.Owner())
			match = in == (sel.op != batchreq.NE)
		case pbsattr.JobHoldTypes:
			match = compareOp(strings.Compare(state.FormatHold(j.Hold&7), sel.val), true, sel.op)
		case pbsattr.JobQueue:
			name := ""
			if j.Queue != nil {
				name = j.Queue.Name
			}
			match = compareOp(strings.Compare(name, sel.val), true, sel.op)
		default:
			var v string
			var ok bool
			if sel.res != "" {
				v, ok = j.Attrs.LookupRes(sel.idx, sel.res)
			} else {
				v = s.jobView(j).GetRes(sel.idx, "")
				ok = v != ""
			}
			if !ok {
				match = sel.op == batchreq.NE
				break
			}
			cmp, ok := state.CompareResource(sel.typ, v, sel.val)
			match = compareOp(cmp, ok, sel.op)
		}
		if !match {
			return false
		}
	}
	return true
}

func compareOp(cmp int, ok bool, op int) bool {
	if !ok {
		return op == batchreq.NE
	}
	switch op {
	case batchreq.EQ:
		return cmp == 0
	case batchreq.NE:
		return cmp != 0
	case batchreq.GE:
		return cmp >= 0
	case batchreq.GT:
		return cmp > 0
	case batchreq.LE:
		return cmp <= 0
	case batchreq.LT:
		return cmp < 0
	}
	return false
}
