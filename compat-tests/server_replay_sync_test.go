package compattests

// This file holds the server replay's handling of job submissions: the
// job number a scenario's first submission takes (setNextJob) and the
// sync-set jobs GoPBS accepts where the capture server rejected them
// (syncJobs): completing their submission and checking their sync-set
// state.

import (
	"fmt"
	"strconv"
	"strings"

	"gopbs/batchreq"
	"gopbs/internal/capture"
)

// syncAttr returns the sync-set attribute (synccount or syncwith) a
// QueueJob carries, or "".
func syncAttr(req *batchreq.Request) string {
	if b, ok := req.Body.(*batchreq.QueueJob); ok {
		for _, a := range b.Attrs {
			if a.Name == "synccount" || a.Name == "syncwith" {
				return a.Name
			}
		}
	}
	return ""
}

// completeSubmission sends what qsub sends after an accepted QueueJob
// (JobScript, RdytoCommit, Commit) and describes any reply that is not
// the acknowledgement qsub expects.
func (r *replayer) completeSubmission(rc *replayConn, user, id string, script []byte) string {
	for _, step := range []struct {
		req    *batchreq.Request
		choice int
	}{
		{batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, user, &batchreq.JobFile{Data: script}), batchreq.BATCH_REPLY_CHOICE_NULL},
		{batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, user, &batchreq.JobID{ID: id}), batchreq.BATCH_REPLY_CHOICE_RdytoCommit},
		{batchreq.NewRequest(batchreq.PBS_BATCH_Commit, user, &batchreq.JobID{ID: id}), batchreq.BATCH_REPLY_CHOICE_Commit},
	} {
		p, err := rc.do(step.req.Append(nil))
		if err != nil {
			return fmt.Sprintf("sync job %s: %s: %v", id, batchreq.RequestName(step.req.Type), err)
		}
		if p.Code != 0 || p.Choice != step.choice {
			return fmt.Sprintf("sync job %s: %s answered %d/%d %q", id, batchreq.RequestName(step.req.Type), p.Code, p.Choice, p.Text)
		}
	}
	return ""
}

// checkSyncSets checks the state of the sync-set jobs accepted in place
// of the capture's rejections (spec 12 §6.2, §6.3): a synccount master
// waits on system hold for its members; a syncwith job naming a job
// that is not a master (capture 88 names an ordinary job) has its
// registration refused with PBSE_NOSYNCMSTR, loses the dependency and is
// put on user hold.
func (r *replayer) checkSyncSets(c *capture.Capture, ids []string) []string {
	var diffs []string
	var kinds []string
	for _, conn := range c.Conns {
		for _, turn := range conn.Turns() {
			if turn.FromClient {
				for _, req := range splitRequests(turn.Data) {
					if k := syncAttr(req); k != "" {
						kinds = append(kinds, k)
					}
				}
			}
		}
	}
	if len(kinds) != len(ids) {
		return []string{fmt.Sprintf("%d sync-set submissions in the capture, %d accepted", len(kinds), len(ids))}
	}
	for i, id := range ids {
		want := map[string]string{"job_state": "H", "Hold_Types": "s", "depend": "synccount:1"}
		if kinds[i] == "syncwith" {
			want = map[string]string{"job_state": "H", "Hold_Types": "u", "depend": ""}
		}
		p := r.admin(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id}))
		if p.Code != 0 || len(p.Status) != 1 {
			diffs = append(diffs, fmt.Sprintf("sync job %s: status %d %q", id, p.Code, p.Text))
			continue
		}
		got := map[string]string{}
		for _, a := range p.Status[0].Attrs {
			got[a.Name] = a.Value
		}
		for name, v := range want {
			if got[name] != v {
				diffs = append(diffs, fmt.Sprintf("sync job %s (%s): %s = %q, want %q", id, kinds[i], name, got[name], v))
			}
		}
	}
	return diffs
}

// firstJobNumber returns the job number the capture's first submission
// took: the first Queue reply's number less the rejected submissions
// before it; -1 when nothing was queued.
func firstJobNumber(c *capture.Capture) int {
	rejected := 0
	for _, conn := range c.Conns {
		if conn.Server.Port() != batchreq.PBS_BATCH_SERVICE_PORT || conn.Client.Port() < 1024 {
			continue
		}
		turns := conn.Turns()
		for i, turn := range turns {
			if !turn.FromClient || i+1 >= len(turns) {
				continue
			}
			reqs, replies := splitRequests(turn.Data), splitReplies(turns[i+1].Data)
			for k, req := range reqs {
				if req.Type != batchreq.PBS_BATCH_QueueJob || k >= len(replies) {
					continue
				}
				if replies[k].Choice == batchreq.BATCH_REPLY_CHOICE_Queue {
					n, err := strconv.Atoi(jobSeq(replies[k].JobID))
					if err != nil {
						return -1
					}
					return n - rejected
				}
				rejected++
			}
		}
	}
	return -1
}

func jobSeq(id string) string {
	if i := strings.IndexAny(id, ".["); i >= 0 {
		return id[:i]
	}
	return id
}
