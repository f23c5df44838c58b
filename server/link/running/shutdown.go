package running

import (
	"strings"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/state"
)

// drainTimeout bounds how long qterm -t immediate/delay waits for the
// running jobs it requeued or killed to end.
const drainTimeout = 60 * time.Second

// Drain handles the running jobs for qterm -t immediate (manner 0)
// and delay (1) (spec 10 §9.6): checkpointable jobs are checkpointed
// and held, rerunnable ones killed and requeued, the others killed
// (immediate) or left running (delay). It returns when the jobs acted
// upon have ended or drainTimeout passed. Other manners return at once.
func (l *Link) Drain(manner int) {
	h := l.host
	if manner != batchreq.SHUT_IMMEDIATE && manner != batchreq.SHUT_DELAY {
		return
	}
	type action struct {
		j        *state.Job
		host     string
		ckpt     bool
		rerun    bool
		leaveRun bool
	}
	h.Lock()
	h.StopStarting() // no new jobs start meanwhile
	var acts []action
	for j := h.Jobs().First(); j != nil; j = j.Next() {
		if j.State != pbsattr.StateRunning {
			continue
		}
		a := action{j: j, host: state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost))}
		switch {
		case !NeverCheckpoint(j.Attrs.Get(pbsattr.JobCheckpoint)):
			// seed 001: every job whose Checkpoint is not n, u
			// included; a MOM that cannot answers PBSE_NOSUP and
			// the job is requeued or killed as without
			a.ckpt = true
		case state.IsTrue(j.Attrs.Get(pbsattr.JobRerunable)):
			a.rerun = true
		case manner == batchreq.SHUT_DELAY:
			a.leaveRun = true
			l.log.Log(logline.EventJob, logline.ClassJob, j.ID, "job running on at Server shutdown")
		}
		if !a.leaveRun {
			acts = append(acts, a)
		}
	}
	h.Unlock()
	var wait []*state.Job
	for _, a := range acts {
		if a.ckpt {
			p, err := l.MomRequest(a.host, batchreq.PBS_BATCH_HoldJob, &batchreq.Manage{Command: batchreq.MGR_CMD_SET,
				ObjType: batchreq.MGR_OBJ_JOB, ObjName: a.j.ID, Attrs: batchreq.AttrList{batchreq.NewAttr("Hold_Types", "s")}}, "")
			if err == nil && p.Code == 0 {
				h.Lock()
				if a.j.State == pbsattr.StateRunning {
					a.j.Hold |= state.HoldSystem
					a.j.Substate = pbsattr.SubRerun
				}
				h.Unlock()
				wait = append(wait, a.j)
				continue
			}
			h.RLock()
			a.rerun = state.IsTrue(a.j.Attrs.Get(pbsattr.JobRerunable))
			h.RUnlock()
			if !a.rerun && manner == batchreq.SHUT_DELAY {
				l.log.Log(logline.EventJob, logline.ClassJob, a.j.ID, "job running on at Server shutdown")
				continue
			}
		}
		ext := ""
		if a.rerun {
			ext = "rerun"
			h.Lock()
			if a.j.State == pbsattr.StateRunning {
				a.j.Substate = pbsattr.SubRerun
			}
			h.Unlock()
		}
		if _, err := l.MomRequest(a.host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: a.j.ID, Signal: "SIGKILL"}, ext); err == nil {
			wait = append(wait, a.j)
		}
	}
	deadline := time.Now().Add(drainTimeout)
	for time.Now().Before(deadline) {
		busy := false
		h.RLock()
		for _, j := range wait {
			if h.Jobs().Get(j.ID) == j && (j.State == pbsattr.StateRunning || j.State == pbsattr.StateExiting) {
				busy = true
			}
		}
		h.RUnlock()
		if !busy {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// NeverCheckpoint reports whether a Checkpoint value is n (or none): the
// only jobs the server's shutdown does not checkpoint (seed 001, Server
// Shutdown: unspecified, u, included).
func NeverCheckpoint(v string) bool {
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t == "n" || t == "none" {
			return true
		}
	}
	return false
}
