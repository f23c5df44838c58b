package status

import (
	"strconv"
	"strings"

	"gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/server/handler"
	"gopbs/server/state"
)

// canSee reports whether the asker may see a job at all.
func canSee(st State, who *handler.Asker, j *state.Job) bool {
	if who.Slice != nil && !who.SeesQueue(j.Queue) {
		return false // not in the scheduler's slice
	}
	if who.Operator || who.Manager || state.IsTrue(st.Attrs().Get(attr.SrvQueryOtherJobs)) {
		return true
	}
	return j.OwnerUser() == who.User
}

func isOwner(who *handler.Asker, j *state.Job) bool { return j.OwnerUser() == who.User }

// JobStatus encodes one job's status for the asker (want as in List).
// Called with the read lock held.
func JobStatus(st State, who *handler.Asker, j *state.Job, want batchreq.AttrList) (batchreq.StatusObject, *batchreq.Attr) {
	return jobStatusOf(st, who, j, want, nil, nil)
}

// wantedJobAttrs returns the attribute indexes a status list names (nil
// for an empty list) and the first name no job attribute has.
func wantedJobAttrs(want batchreq.AttrList) ([]bool, *batchreq.Attr) {
	if len(want) == 0 {
		return nil, nil
	}
	wanted := make([]bool, len(state.JobDefs.Defs))
	for i := range want {
		idx := state.JobDefs.Find(want[i].Name)
		if idx < 0 {
			return nil, &want[i]
		}
		wanted[idx] = true
	}
	return wanted, nil
}

// jobStatusOf is JobStatus building the view of the wanted attributes
// only (wanted from wantedJobAttrs; nil: computed here) into buf.
func jobStatusOf(st State, who *handler.Asker, j *state.Job, want batchreq.AttrList, wanted []bool, buf *state.Attrs) (batchreq.StatusObject, *batchreq.Attr) {
	if wanted == nil && len(want) > 0 {
		var bad *batchreq.Attr
		if wanted, bad = wantedJobAttrs(want); bad != nil {
			return batchreq.StatusObject{}, bad
		}
	}
	var view state.Attrs
	if buf != nil {
		view = *buf
	}
	view = ClientView(state.JobView(view, j, st.Name(), wanted))
	if buf != nil {
		*buf = view
	}
	if len(want) == 0 {
		view = st.WithRemaining(view, j)
	}
	list, bad := List(state.JobDefs, view, who, isOwner(who, j), want)
	return batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_JOB, Name: j.ID, Attrs: list}, bad
}

// Job answers a StatusJob.
func Job(st State, w Writer, who *handler.Asker, req *batchreq.Request) {
	st.RLock()
	p, raw := statusJobs(st, who, req)
	st.RUnlock()
	if raw != nil {
		w.SendRaw(raw)
		return
	}
	w.Send(p)
}

// statusJobs answers a StatusJob: either a reply, or (for a full status)
// the encoded reply bytes.
func statusJobs(st State, who *handler.Asker, req *batchreq.Request) (*batchreq.Reply, []byte) {
	body := req.Body.(*batchreq.StatusReq)
	ext := strings.ToLower(req.Extension)
	summarize := strings.HasPrefix(ext, "summarize_arrays")
	execOnly := strings.Contains(ext, "exec_queue_only")
	id := body.ID
	var jobs []*state.Job
	single := false
	switch {
	case id == "" || id[0] == '@' || summarize && strings.Contains(id, "[]"):
		for j := st.Jobs().First(); j != nil; j = j.Next() {
			jobs = append(jobs, j)
		}
	case id[0] >= '0' && id[0] <= '9':
		j := st.FindJob(id)
		if j == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, "", ""), nil
		}
		if j.Array != nil && !summarize {
			jobs = append(jobs, j.Array.Subjobs...)
		} else {
			jobs = []*state.Job{j}
			single = true
		}
	default:
		name := id
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i]
		}
		q := st.Queue(name)
		if q == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKQUE, "", batchreq.MsgCannotLocateQue), nil
		}
		for j := st.Jobs().First(); j != nil; j = j.Next() {
			if j.Queue == q {
				jobs = append(jobs, j)
			}
		}
	}
	if strings.HasPrefix(ext, "truncated") {
		jobs = truncate(jobs)
	}
	var delta int64 = -1
	if i := strings.Index(req.Extension, "DELTA:"); i >= 0 {
		v := req.Extension[i+len("DELTA:"):]
		if k := strings.IndexAny(v, " ,"); k >= 0 {
			v = v[:k]
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			delta = n
		}
	}
	if len(body.Attrs) == 0 {
		return nil, appendJobStatuses(st, who, jobs, single, summarize, execOnly, delta)
	}
	// The wanted attributes are looked up once; an unknown one is
	// refused at the first job listed, as before.
	wanted, bad := wantedJobAttrs(body.Attrs)
	var view state.Attrs
	objs := make([]batchreq.StatusObject, 0, len(jobs))
	for _, j := range jobs {
		if !jobListed(st, who, j, single, summarize, execOnly) {
			continue
		}
		if bad != nil {
			return batchreq.ErrorReply(batchreq.PBSE_NOATTR, "", ""), nil
		}
		o, bad := jobStatusOf(st, who, j, body.Attrs, wanted, &view)
		if bad != nil {
			return batchreq.ErrorReply(batchreq.PBSE_NOATTR, "", ""), nil
		}
		objs = append(objs, o)
	}
	return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs}, nil
}

// jobListed reports whether a job of a multi-job status is listed.
func jobListed(st State, who *handler.Asker, j *state.Job, single, summarize, execOnly bool) bool {
	if !single {
		if summarize && j.Parent != nil || !summarize && j.Array != nil {
			return false
		}
		if execOnly && (j.Queue == nil || !j.Queue.IsExec()) {
			return false
		}
	}
	return canSee(st, who, j)
}

// truncate keeps at most max_report queued jobs of each queue
// (StatusJob extension "truncated").
func truncate(jobs []*state.Job) []*state.Job {
	seen := map[*state.Queue]int64{}
	out := jobs[:0:0]
	for _, j := range jobs {
		if j.State == attr.StateQueued && j.Queue != nil {
			if max, ok := j.Queue.Long(attr.QueueMaxReport); ok {
				if seen[j.Queue] >= max {
					continue
				}
				seen[j.Queue]++
			}
		}
		out = append(out, j)
	}
	return out
}

// ClientView adjusts a job view for clients: the interactive attribute
// holds qsub's port for the MOM but is reported as True (spec 04 §3).
func ClientView(view state.Attrs) state.Attrs {
	for i := range view {
		if view[i].Index == attr.JobInteractive && view[i].Value != "" {
			view[i].Value = "True"
		}
	}
	return view
}

// deltaView reduces a job not modified since the DELTA time to Job_Name
// and resources_used.
func deltaView(j *state.Job, view state.Attrs, since int64) state.Attrs {
	if since < 0 {
		return view
	}
	if mt, _ := strconv.ParseInt(j.Attrs.Get(attr.JobMtime), 10, 64); mt >= since {
		return view
	}
	out := view[:0]
	for _, v := range view {
		if v.Index == attr.JobName || v.Index == attr.JobResourcesUsed {
			out = append(out, v)
		}
	}
	return out
}

// appendJobStatuses encodes a whole Status reply for the jobs listed.
func appendJobStatuses(st State, who *handler.Asker, jobs []*state.Job, single, summarize, execOnly bool, delta int64) []byte {
	listed := jobs[:0:0]
	for _, j := range jobs {
		if jobListed(st, who, j, single, summarize, execOnly) {
			listed = append(listed, j)
		}
	}
	return EncodeJobStatuses(st, who, listed, delta)
}

// EncodeJobStatuses encodes a Status reply of the full status of jobs
// (each seen by the asker; delta as for the DELTA extension, -1: none),
// the same bytes as a batchreq.Reply of their JobStatus objects, but
// without building those objects: the reply is written straight into one
// buffer. Called with the read lock held.
func EncodeJobStatuses(st State, who *handler.Asker, jobs []*state.Job, delta int64) []byte {
	out := make([]byte, 0, 32+len(jobs)*1100)
	out = append(out, "+2+1+0+0+6"...) // protocol 2 version 1, code 0, aux 0, BATCH_REPLY_CHOICE_Status
	out = dis.AppendUint(out, uint64(len(jobs)))
	name := st.Name()
	var view state.Attrs
	for _, j := range jobs {
		view = st.WithRemaining(deltaView(j, ClientView(state.JobView(view, j, name, nil)), delta), j)
		out = append(out, '+', '2') // MGR_OBJ_JOB
		out = dis.AppendString(out, j.ID)
		out = appendStatusAttrs(out, state.JobDefs, view, who, isOwner(who, j))
	}
	return out
}
