package jobctl

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// Modify serves a ModifyJob or an AsyModifyJob (answered before the
// change is made).
func Modify(st State, w handler.ReplyWriter, who *handler.Asker, req *batchreq.Request) {
	body := req.Body.(*batchreq.Manage)
	async := req.Type == batchreq.PBS_BATCH_AsyModifyJob
	if async {
		w.Send(batchreq.NullReply())
	}
	st.Lock()
	targets, top := st.Targets(body.ObjName, req.Extension)
	if top == nil {
		st.Unlock()
		unknownJob(st, w, body.ObjName, batchreq.MsgCannotLocateJob)
		return
	}
	tx := st.Begin()
	for _, j := range targets {
		if !permitted(st, who, req.Type, j) {
			st.Unlock()
			w.Reject(batchreq.PBSE_PERM, batchreq.MsgNotPermitted)
			return
		}
		if p := modifyJob(st, tx, who, j, body.Attrs); p != nil {
			st.Unlock()
			w.Send(p)
			return
		}
		st.Log().Logf(logline.EventJob, logline.ClassJob, j.ID, "Job Modified at request of %s", who.Requester())
		tx.SaveJob(j)
	}
	if commentOnly(body.Attrs) {
		// The scheduler sets a comment on every job it cannot run, one
		// request after the other: an fdatasync per comment would make
		// its first cycle over a full queue last seconds. A comment is
		// acknowledged once it survives a crash of the server.
		wait := tx.CommitLogged()
		st.Unlock()
		if err := wait(); err != nil {
			w.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save job"))
			return
		}
		w.Send(batchreq.NullReply())
		return
	}
	st.Running().CommitModify(w, targets, body.Attrs, tx.Ops()) // relays resource changes of running jobs
}

// commentOnly reports whether a ModifyJob sets nothing but the job's
// comment (an attribute only operators, managers and the scheduler may
// set).
func commentOnly(list batchreq.AttrList) bool {
	if len(list) == 0 {
		return false
	}
	for _, a := range list {
		if state.JobDefs.Find(a.Name) != pbsattr.JobComment {
			return false
		}
	}
	return true
}

// modifyJob applies a ModifyJob attribute list to a job atomically, in
// tx: an error reply, or nil with the job changed.
func modifyJob(st State, tx *state.Txn, who *handler.Asker, j *state.Job, list batchreq.AttrList) *batchreq.Reply {
	if j.State == pbsattr.StateComplete || j.State == pbsattr.StateExiting {
		return batchreq.ErrorReply(batchreq.PBSE_BADSTATE, "", "invalid state for job - "+state.StateName(j.State))
	}
	if j.State == pbsattr.StateTransit {
		return batchreq.ErrorReply(batchreq.PBSE_BADSTATE, "", "")
	}
	na := j.Attrs.Clone()
	hold := j.Hold
	depChanged, nodesChanged := false, false
	for i := range list {
		a := &list[i]
		idx := state.JobDefs.Find(a.Name)
		if idx < 0 || idx == state.UnknownJobAttr {
			return batchreq.BadAttrReply(batchreq.PBSE_NOATTR, a)
		}
		d := state.JobDefs.Defs[idx]
		if !who.Writable(d.Perm) {
			return batchreq.ErrorReply(batchreq.PBSE_ATTRRO, "", "")
		}
		if j.State == pbsattr.StateRunning && d.Flags&pbsattr.FlagAltRun == 0 {
			return batchreq.BadAttrReply(batchreq.PBSE_MODATRRUN, a)
		}
		switch d.Type {
		case pbsattr.TypeResourceList:
			res := strings.ToLower(a.Resource)
			rd, ok := state.Resources[res]
			if !ok {
				if j.Queue == nil || j.Queue.IsExec() {
					return batchreq.BadAttrReply(batchreq.PBSE_UNKRESC, a)
				}
				rd = state.ResourceDef{Type: pbsattr.TypeString}
			}
			if rd.Perm != 0 && !who.Writable(rd.Perm) { // known state.Resources only
				return batchreq.ErrorReply(batchreq.PBSE_ATTRRO, "", "")
			}
			v, ok := state.DecodeValue(rd.Type, a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			old, had := na.LookupRes(idx, res)
			if j.State == pbsattr.StateRunning && had && v != "" && !who.Operator && !who.Manager {
				// seed 001: a running job's limits may only be lowered by its owner
				if cmp, ok := state.CompareResource(rd.Type, v, old); ok && cmp > 0 {
					return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "")
				}
			}
			na.SetRes(idx, res, v)
			if res == "nodes" {
				nodesChanged = true
				na.SetRes(idx, "nodect", strconv.Itoa(state.NodeCount(v)))
				na.SetRes(idx, "neednodes", v)
			}
			if j.Queue != nil && v != "" {
				limit, ok := j.Queue.Attrs.LookupRes(pbsattr.QueueResourcesMax, res)
				if !ok {
					limit, ok = st.Attrs().LookupRes(pbsattr.SrvResourcesMax, res)
				}
				if ok {
					if cmp, ok := state.CompareResource(rd.Type, v, limit); ok && cmp > 0 {
						return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", "")
					}
				}
			}
		case pbsattr.TypeHold:
			h, ok := state.ParseHold(a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			changedBits := h ^ (hold & 7)
			if changedBits&state.HoldSystem != 0 && !who.Manager || changedBits&state.HoldOther != 0 && !who.Operator && !who.Manager {
				return batchreq.ErrorReply(batchreq.PBSE_PERM, "", "")
			}
			hold = hold&^7 | h
		case pbsattr.TypeDepend:
			v, ok := st.NormalizeDepend(a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			na.Set(idx, v)
			depChanged = true
		default:
			v, ok := d.Decode(a.Value)
			if !ok {
				return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a)
			}
			if idx == pbsattr.JobVariableList {
				v = a.Value
			}
			na.Set(idx, v)
		}
	}
	if nodesChanged && j.Queue != nil && j.Queue.IsExec() && !st.Feasible(na.GetRes(pbsattr.JobResourceList, "nodes")) {
		// the submission's check, with its code and text
		return batchreq.ErrorReply(batchreq.PBSE_EXCQRESC, "", st.InfeasibleText())
	}
	j.Attrs = na
	j.Hold = hold
	if depChanged && j.Queue != nil && j.Queue.IsExec() {
		if st.RegisterDeps(tx, j) {
			j.Hold |= state.HoldSystem
			j.Substate = pbsattr.SubDepnHold
		}
	}
	if j.State != pbsattr.StateRunning {
		if j.Hold&state.HoldSystem == 0 && (j.Substate == pbsattr.SubDepnHold || j.Substate == pbsattr.SubSyncHold) {
			j.Substate = pbsattr.SubHeld
		}
		st.Evaluate(tx, j)
	}
	st.Touch(j)
	return nil
}
