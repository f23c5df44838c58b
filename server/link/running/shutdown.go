package server

import (
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/server/state"
)

// drainTimeout bounds how long qterm -t immediate/delay waits for the
// running jobs it requeued or killed to end.
const drainTimeout = 60 * time.Second

// drainJobs handles the running jobs for qterm -t immediate (manner 0)
// and delay (1) (spec 10 §9.6): checkpointable jobs are checkpointed
// and held, rerunnable ones killed and requeued, the others killed
// (immediate) or left running (delay). It returns when the jobs acted
// upon have ended or drainTimeout passed. Other manners return at once.
func (rl *runLink) drainJobs(manner int) {
	s := rl.s
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
	s.mu.Lock()
	s.shutting = true // no new jobs start meanwhile
	var acts []action
	for j := s.jobs.First(); j != nil; j = j.Next() {
		if j.State != pbsattr.StateRunning {
			continue
		}
		a := action{j: j, host: motherSuperior(j.Attrs.Get(pbsattr.JobExecHost))}
		switch {
		case !neverCheckpoint(j.Attrs.Get(pbsattr.JobCheckpoint)):
			// seed 001: every job whose Checkpoint is not n, u
			// included; a MOM that cannot answers PBSE_NOSUP and
			// the job is requeued or killed as without
			a.ckpt = true
		case state.IsTrue(j.Attrs.Get(pbsattr.JobRerunable)):
			a.rerun = true
		case manner == batchreq.SHUT_DELAY:
			a.leaveRun = true
			s.log.Log(logline.EventJob, logline.ClassJob, j.ID, "job running on at Server shutdown")
		}
		if !a.leaveRun {
			acts = append(acts, a)
		}
	}
	s.mu.Unlock()
	var wait []*state.Job
	for _, a := range acts {
		if a.ckpt {
			p, err := rl.momRequest(a.host, batchreq.PBS_BATCH_HoldJob, &batchreq.Manage{Command: batchreq.MGR_CMD_SET,
				ObjType: batchreq.MGR_OBJ_JOB, ObjName: a.j.ID, Attrs: batchreq.AttrList{batchreq.NewAttr("Hold_Types", "s")}}, "")
			if err == nil && p.Code == 0 {
				s.mu.Lock()
				if a.j.State == pbsattr.StateRunning {
					a.j.Hold |= state.HoldSystem
					a.j.Substate = pbsattr.SubRerun
				}
				s.mu.Unlock()
				wait = append(wait, a.j)
				continue
			}
			s.mu.RLock()
			a.rerun = state.IsTrue(a.j.Attrs.Get(pbsattr.JobRerunable))
			s.mu.RUnlock()
			if !a.rerun && manner == batchreq.SHUT_DELAY {
				s.log.Log(logline.EventJob, logline.ClassJob, a.j.ID, "job running on at Server shutdown")
				continue
			}
		}
		ext := ""
		if a.rerun {
			ext = "rerun"
			s.mu.Lock()
			if a.j.State == pbsattr.StateRunning {
				a.j.Substate = pbsattr.SubRerun
			}
			s.mu.Unlock()
		}
		if _, err := rl.momRequest(a.host, batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: a.j.ID, Signal: "SIGKILL"}, ext); err == nil {
			wait = append(wait, a.j)
		}
	}
	deadline := time.Now().Add(drainTimeout)
	for time.Now().Before(deadline) {
		busy := false
		s.mu.RLock()
		for _, j := range wait {
			if s.jobs.Get(j.ID) == j && (j.State == pbsattr.StateRunning || j.State == pbsattr.StateExiting) {
				busy = true
			}
		}
		s.mu.RUnlock()
		if !busy {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
