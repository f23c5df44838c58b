package admit

import (
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/state"
)

// Checkpoint values (qsub -c, spec 05; seed 001): the comma-separated
// items n/none, u, s/shutdown, c, c=<minutes>, periodic,
// interval=<minutes>, enabled, depth=<n>, dir=<path>.

// WantsCheckpoints reports whether a Checkpoint value asks for
// checkpoints (anything but n, none, u, depth= and dir= items): the
// value an execution queue refuses where no node can take checkpoints
// (seed 001, Queue Job Request).
func WantsCheckpoints(v string) bool {
	for _, t := range strings.Split(v, ",") {
		key, _, _ := strings.Cut(strings.TrimSpace(t), "=")
		switch key {
		case "", "n", "none", "u", "depth", "dir":
		default:
			return true
		}
	}
	return false
}

// checkpointCapable reports whether a node of the server has reported
// that its MOM takes checkpoints (checkpoint=yes among its status items,
// a $checkpoint_script).
func (c *Checker) checkpointCapable() bool {
	for _, n := range c.st.Nodes() {
		for _, item := range strings.Split(n.Attrs.Get(pbsattr.NodeStatus), ",") {
			if item == "checkpoint=yes" {
				return true
			}
		}
	}
	return false
}

// refuseCheckpoints is the refusal of a job that asks for checkpoints by
// an execution queue of a server none of whose nodes can take them, or
// nil.
func (c *Checker) refuseCheckpoints(j *state.Job, q *state.Queue) *batchreq.Reply {
	if !q.IsExec() || !WantsCheckpoints(j.Attrs.Get(pbsattr.JobCheckpoint)) || c.checkpointCapable() {
		return nil
	}
	return batchreq.ErrorReply(batchreq.PBSE_NOSUP, "",
		"job asks for checkpoints (Checkpoint="+j.Attrs.Get(pbsattr.JobCheckpoint)+") and no node of queue "+q.Name+" can take them")
}

// applyCheckpointDefaults gives a job entering an execution queue the
// queue's checkpoint_defaults when its Checkpoint is unspecified, and
// raises a periodic interval below the queue's checkpoint_min to it (spec
// 12 §4; seed 001, Job Initiation).
func applyCheckpointDefaults(j *state.Job, q *state.Queue) {
	if !q.IsExec() {
		return
	}
	v := j.Attrs.Get(pbsattr.JobCheckpoint)
	if d := q.Attrs.Get(pbsattr.QueueCheckpointDefaults); d != "" && (v == "" || v == "u") {
		v = d
	}
	if m, ok := q.Long(pbsattr.QueueCheckpointMin); ok && m > 0 {
		items := strings.Split(v, ",")
		for i, t := range items {
			key, val, has := strings.Cut(strings.TrimSpace(t), "=")
			if (key == "c" || key == "interval") && has {
				if n, err := strconv.ParseInt(val, 10, 64); err == nil && n < m {
					items[i] = key + "=" + strconv.FormatInt(m, 10)
				}
			}
		}
		v = strings.Join(items, ",")
	}
	if v != j.Attrs.Get(pbsattr.JobCheckpoint) {
		j.Attrs.Set(pbsattr.JobCheckpoint, v)
	}
}
