package status

import (
	"strings"

	"gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// selector is one decoded selection criterion.
type selector struct {
	idx  int
	res  string
	typ  attr.Type
	val  string
	op   int
	attr *batchreq.Attr
}

// Select answers a SelectJobs (the ids of the jobs selected) or a SelStat
// (their full status).
func Select(st State, w Writer, who *handler.Asker, req *batchreq.Request) {
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
			w.RejectAttr(batchreq.PBSE_NOATTR, a)
			return
		}
		d := state.JobDefs.Defs[idx]
		if a.Op < batchreq.EQ || a.Op > batchreq.LT {
			w.RejectAttr(batchreq.PBSE_IVALREQ, a)
			return
		}
		if d.Flags&attr.FlagSelEQ != 0 && a.Op != batchreq.EQ && a.Op != batchreq.NE {
			w.RejectAttr(batchreq.PBSE_IVALREQ, a)
			return
		}
		sel := selector{idx: idx, typ: d.Type, op: a.Op, attr: a, val: a.Value}
		switch {
		case idx == attr.JobState || idx == attr.JobUserList:
		case d.Type == attr.TypeResourceList:
			rd, ok := state.Resources[strings.ToLower(a.Resource)]
			if !ok {
				w.RejectAttr(batchreq.PBSE_UNKRESC, a)
				return
			}
			sel.res, sel.typ = strings.ToLower(a.Resource), rd.Type
			v, ok := state.DecodeValue(rd.Type, a.Value)
			if !ok {
				w.RejectAttr(batchreq.PBSE_BADATVAL, a)
				return
			}
			sel.val = v
		case d.Type == attr.TypeHold:
			v, ok := state.DecodeValue(d.Type, a.Value)
			if !ok {
				w.RejectAttr(batchreq.PBSE_BADATVAL, a)
				return
			}
			sel.val = v
		default:
			v, ok := state.DecodeValue(d.Type, a.Value)
			if !ok {
				w.RejectAttr(batchreq.PBSE_BADATVAL, a)
				return
			}
			sel.val = v
		}
		sels = append(sels, sel)
	}
	st.RLock()
	var q *state.Queue
	if queue != "" {
		if q = st.Queue(queue); q == nil {
			st.RUnlock()
			w.Reject(batchreq.PBSE_UNKQUE, "")
			return
		}
	}
	var ids []string
	var jobs []*state.Job
	name := st.Name()
	for j := st.Jobs().First(); j != nil; j = j.Next() {
		if summarize && j.Parent != nil || !summarize && j.Array != nil {
			continue
		}
		if q != nil && j.Queue != q || execOnly && (j.Queue == nil || !j.Queue.IsExec()) {
			continue
		}
		if !canSee(st, who, j) || !selects(j, sels, name) {
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
		raw := EncodeJobStatuses(st, who, jobs, -1)
		st.RUnlock()
		w.SendRaw(raw)
		return
	}
	st.RUnlock()
	w.Send(&batchreq.Reply{AuxCode: len(ids), Choice: batchreq.BATCH_REPLY_CHOICE_Select, JobIDs: ids})
}

// selects reports whether a job meets every criterion (server: the
// server's name, the job's server attribute).
func selects(j *state.Job, sels []selector, server string) bool {
	for _, sel := range sels {
		var match bool
		switch sel.idx {
		case attr.JobState:
			in := strings.Contains(sel.val, j.StateLetter())
			match = in == (sel.op != batchreq.NE)
		case attr.JobUserList:
			in := state.MatchUserACL(state.ParseArst(sel.val), j.Owner())
			match = in == (sel.op != batchreq.NE)
		case attr.JobHoldTypes:
			match = compareOp(strings.Compare(state.FormatHold(j.Hold&7), sel.val), true, sel.op)
		case attr.JobQueue:
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
				v = state.JobView(nil, j, server, nil).GetRes(sel.idx, "")
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
