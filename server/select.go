package server

import (
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
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
		idx := jobDefs.find(a.Name)
		if idx < 0 || idx == unknownJobAttr {
			c.rejectAttr(batchreq.PBSE_NOATTR, a)
			return
		}
		d := jobDefs.defs[idx]
		if a.Op < batchreq.EQ || a.Op > batchreq.LT {
			c.rejectAttr(batchreq.PBSE_IVALREQ, a)
			return
		}
		if d.flags&pbsattr.FlagSelEQ != 0 && a.Op != batchreq.EQ && a.Op != batchreq.NE {
			c.rejectAttr(batchreq.PBSE_IVALREQ, a)
			return
		}
		sel := selector{idx: idx, typ: d.typ, op: a.Op, attr: a, val: a.Value}
		switch {
		case idx == pbsattr.JobState || idx == pbsattr.JobUserList:
		case d.typ == pbsattr.TypeResourceList:
			rd, ok := resources[strings.ToLower(a.Resource)]
			if !ok {
				c.rejectAttr(batchreq.PBSE_UNKRESC, a)
				return
			}
			sel.res, sel.typ = strings.ToLower(a.Resource), rd.typ
			v, ok := decodeValue(rd.typ, a.Value)
			if !ok {
				c.rejectAttr(batchreq.PBSE_BADATVAL, a)
				return
			}
			sel.val = v
		case d.typ == pbsattr.TypeHold:
			v, ok := decodeValue(d.typ, a.Value)
			if !ok {
				c.rejectAttr(batchreq.PBSE_BADATVAL, a)
				return
			}
			sel.val = v
		default:
			v, ok := decodeValue(d.typ, a.Value)
			if !ok {
				c.rejectAttr(batchreq.PBSE_BADATVAL, a)
				return
			}
			sel.val = v
		}
		sels = append(sels, sel)
	}
	s.mu.RLock()
	var q *Queue
	if queue != "" {
		if q = s.queueByName[queue]; q == nil {
			s.mu.RUnlock()
			c.reject(batchreq.PBSE_UNKQUE, "")
			return
		}
	}
	var ids []string
	var jobs []*Job
	for j := s.head; j != nil; j = j.next {
		if summarize && j.parent != nil || !summarize && j.array != nil {
			continue
		}
		if q != nil && j.queue != q || execOnly && (j.queue == nil || !j.queue.isExec()) {
			continue
		}
		if !s.canSee(c, j) || !s.selects(j, sels) {
			continue
		}
		if req.Type == batchreq.PBS_BATCH_SelStat {
			jobs = append(jobs, j)
		} else {
			ids = append(ids, j.id)
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
func (s *Server) selects(j *Job, sels []selector) bool {
	for _, sel := range sels {
		var match bool
		switch sel.idx {
		case pbsattr.JobState:
			in := strings.Contains(sel.val, j.stateLetter())
			match = in == (sel.op != batchreq.NE)
		case pbsattr.JobUserList:
			in := aclMatchUser(parseArst(sel.val), j.owner())
			match = in == (sel.op != batchreq.NE)
		case pbsattr.JobHoldTypes:
			match = compareOp(strings.Compare(formatHold(j.hold&7), sel.val), true, sel.op)
		case pbsattr.JobQueue:
			name := ""
			if j.queue != nil {
				name = j.queue.name
			}
			match = compareOp(strings.Compare(name, sel.val), true, sel.op)
		default:
			var v string
			var ok bool
			if sel.res != "" {
				v, ok = j.attrs.lookupRes(sel.idx, sel.res)
			} else {
				v = s.jobView(j).getRes(sel.idx, "")
				ok = v != ""
			}
			if !ok {
				match = sel.op == batchreq.NE
				break
			}
			cmp, ok := compareResource(sel.typ, v, sel.val)
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
