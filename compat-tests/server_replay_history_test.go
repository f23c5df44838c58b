package compattests

// This file holds what the server replay's round 1 reproduces of the
// capture run outside the captured scenarios: the long jobs 9, 10 and 11
// (submitted as scenario 27's qsub, started, rerun), the reports node vm's
// MOM made about them, their resource usage, and the waits for the
// server to take them in.

import (
	"path/filepath"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/capture"
)

// afterRound1Step does what the capture run did, outside the captured
// scenarios, after round-1 scenario id.
func (r *replayer) afterRound1Step(t *testing.T, dir string, id int) {
	switch id {
	case 34:
		r.submitLongJobs(t, dir)
	case 35:
		r.startJob10(t, dir)
	case 58, 62:
		// the capture run's next command came seconds later, when the
		// server had finished the job
		r.waitJobGone(t, map[int]string{58: "9.vm", 62: "10.vm"}[id])
	case 63:
		r.startJob11(t, dir)
	case 65:
		r.rerunJob11(t, dir)
	}
}

// The capture run's long jobs 9 (longjob) and 10 (longjob2): submitted
// between scenarios 34 and 35, started by qrun (9 in scenario 35, 10
// three seconds later, not captured) on node vm's MOM, whose status poll
// answers carry the session ids the capture shows.
var longJobs = []struct{ name, id, sessionFrom string }{
	{"longjob", "9.vm", "35-qrun-queued-job.pcap"}, // the MOM's reply to the poll after the launch
	{"longjob2", "10.vm", "36-qstat-jobs.pcap"},    // launch not captured: the server's view of it
}

// submitLongJobs submits jobs 9 and 10. The capture corpus has no qsub of
// them: the submission is the client bytes of scenario 27's qsub (plain
// script, same user and environment) with the two values `qsub -N NAME
// long.sh` sends differently, Job_Name and submit_args (as scenario 36's
// StatusJob reply shows them), and the script the server passed to the
// MOM in scenario 35.
func (r *replayer) submitLongJobs(t *testing.T, dir string) {
	script := capturedScript(t, filepath.Join(dir, "35-qrun-queued-job.pcap"))
	for _, job := range longJobs {
		session := capturedAttrs(t, filepath.Join(dir, job.sessionFrom), job.id, "session_id")
		if len(session) != 1 {
			t.Fatalf("%s: no session_id of %s", job.sessionFrom, job.id)
		}
		r.mom.setJobAttrs(job.id, session)
		id := r.submitAs27(t, dir, map[string]string{"Job_Name": job.name, "submit_args": "-N " + job.name + " long.sh"}, script)
		if id != job.id {
			t.Fatalf("submitted %s, want %s", id, job.id)
		}
	}
}

// startJob10 starts job 10 as the capture run's uncaptured qrun did and
// waits until the server knows both jobs' session ids (it learns them
// from its first status poll, which follows a launch).
func (r *replayer) startJob10(t *testing.T, dir string) {
	r.run(t, longJobs[1].id)
	for _, job := range longJobs {
		session := capturedAttrs(t, filepath.Join(dir, job.sessionFrom), job.id, "session_id")
		r.waitJobAttr(t, job.id, session[0].Name, session[0].Value)
	}
}

// job11 is the job the capture run submitted and started between
// scenarios 63 and 65 (server log and accounting of 01:23:02: job 11.vm,
// job name longjob3, owner alice, queue batch, "Job Run at request of
// root@vm", S record with exec_host vm/0).
const job11 = "11.vm"

// startJob11 submits job 11 as jobs 9 and 10 were submitted (capture 27's
// qsub with the job name longjob3, the script of the long jobs), starts
// it as root's qrun did and waits until it runs.
func (r *replayer) startJob11(t *testing.T, dir string) {
	script := capturedScript(t, filepath.Join(dir, "35-qrun-queued-job.pcap"))
	id := r.submitAs27(t, dir, map[string]string{"Job_Name": "longjob3", "submit_args": "-N longjob3 long.sh"}, script)
	if id != job11 {
		t.Fatalf("submitted %s, want %s", id, job11)
	}
	r.run(t, job11)
	r.waitJobAttr(t, job11, "job_state", "R")
}

// rerunJob11 does what scenario 66, absent from the manifest, did after
// scenario 65 (server log "Job Rerun at request of root@vm" and
// accounting R record at 01:23:08; the MOM log shows it killing the job):
// root reruns job 11, its MOM reports the end as node vm's MOM reported
// job 10's, killed by qdel, in capture 62 (status, then obituary), and
// the server requeues the job, which stays queued (scheduling is off).
func (r *replayer) rerunJob11(t *testing.T, dir string) {
	r.mustAdmin(t, "rerun "+job11, batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "root", &batchreq.JobID{ID: job11}))
	r.momReportsAs(t, filepath.Join(dir, "62-qdel-running.pcap"), "10.vm", job11)
	r.waitJobAttr(t, job11, "job_state", "Q")
}

// momReportsAs sends the requests node vm's MOM sent to the server in
// capture file about job from (status before the obituary, the
// obituary) as reports about job to, from a reserved port as a MOM does,
// and reads the replies.
func (r *replayer) momReportsAs(t *testing.T, file, from, to string) {
	sent := 0
	r.forEachMomReport(t, file, func(rc *replayConn, data []byte) {
		for _, req := range splitRequests(data) {
			switch b := req.Body.(type) {
			case *batchreq.StatusReq:
				if b.ID != from {
					continue
				}
				b.ID = to
			case *batchreq.JobObit:
				if b.JobID != from {
					continue
				}
				b.JobID = to
			default:
				continue
			}
			p, err := rc.do(req.Append(nil))
			if err != nil {
				t.Fatalf("MOM report %s of %s: %v", batchreq.RequestName(req.Type), to, err)
			}
			if p.Code != 0 {
				t.Fatalf("MOM report %s of %s: %d %s", batchreq.RequestName(req.Type), to, p.Code, p.Text)
			}
			sent++
		}
	})
	if sent == 0 {
		t.Fatalf("%s holds no MOM report of %s", file, from)
	}
}

// forEachMomReport calls send, for every connection node vm's MOM opened
// to the server in capture file, with a new reserved-port connection to
// the server and each of the MOM's turns on it in order; the connection
// is closed afterwards.
func (r *replayer) forEachMomReport(t *testing.T, file string, send func(rc *replayConn, data []byte)) {
	c, err := capture.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, conn := range c.Conns {
		turns := conn.Turns()
		if !isMomReport(conn, turns) {
			continue
		}
		rc := r.dialReserved()
		for _, turn := range turns {
			if turn.FromClient {
				send(rc, turn.Data)
			}
		}
		rc.nc.Close()
	}
}

// waitJobAttr waits until the server reports attribute name of job id
// with the given value.
func (r *replayer) waitJobAttr(t *testing.T, id, name, value string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := r.admin(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id, Attrs: batchreq.StatusNames(name)}))
		if p.Code == 0 && len(p.Status) == 1 {
			if v, _ := p.Status[0].Attrs.Get(name); v == value {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %s is not %q: %+v", id, name, value, p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitJobGone waits until the server no longer knows job id.
func (r *replayer) waitJobGone(t *testing.T, id string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := r.admin(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id}))
		if p.Code == batchreq.PBSE_UNKJOBID {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still known after its end: %d %+v", id, p.Code, p.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// submitAs27 replays the client side of scenario 27's qsub with the given
// attribute values and script replaced, and returns the new job's id.
func (r *replayer) submitAs27(t *testing.T, dir string, values map[string]string, script []byte) string {
	c, err := capture.ReadFile(filepath.Join(dir, "27-qsub-plain-script.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []*batchreq.Request
	for _, conn := range c.Conns {
		if conn.Server.Port() == batchreq.PBS_BATCH_SERVICE_PORT && conn.Client.Port() >= 1024 {
			for _, turn := range conn.Turns() {
				if turn.FromClient {
					reqs = append(reqs, splitRequests(turn.Data)...)
				}
			}
		}
	}
	var rc *replayConn
	id := ""
	for _, req := range reqs {
		switch b := req.Body.(type) {
		case *batchreq.QueueJob:
			for k, a := range b.Attrs {
				if v, ok := values[a.Name]; ok {
					b.Attrs[k] = batchreq.NewAttr(a.Name, v)
				}
			}
		case *batchreq.JobFile:
			b.Data = script
		case *batchreq.JobID:
			b.ID = id
		}
		if req.Type == batchreq.PBS_BATCH_Disconnect {
			break
		}
		if rc == nil {
			rc = r.userConn(t, req.User)
			defer rc.nc.Close()
		}
		p, err := rc.do(req.Append(nil))
		if err != nil || p.Code != 0 {
			t.Fatalf("capture 27 submission, %s: %v %+v", batchreq.RequestName(req.Type), err, p)
		}
		if req.Type == batchreq.PBS_BATCH_QueueJob {
			id = p.JobID
		}
	}
	if id == "" {
		t.Fatal("capture 27 holds no QueueJob")
	}
	return id
}

// reportUsage makes node vm's MOM answer status polls of the running
// jobs with the resources_used the capture file's replies show, lets the
// server poll once (job_stat_rate 1 s for the moment) and waits until
// the server reports the values.
func (r *replayer) reportUsage(t *testing.T, file string) {
	want := map[string]batchreq.AttrList{}
	for _, id := range r.mom.jobIDs() {
		if used := capturedAttrs(t, file, id, "resources_used"); len(used) > 0 {
			want[id] = used
			r.mom.setJobAttrs(id, used)
		}
	}
	if len(want) == 0 {
		t.Fatalf("%s shows no resources_used of the MOM's jobs", file)
	}
	r.mustAdmin(t, "job_stat_rate", setServer("job_stat_rate", "1"))
	defer r.admin(mgrReq(batchreq.MGR_CMD_UNSET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("job_stat_rate", "")))
	deadline := time.Now().Add(10 * time.Second)
	for id, used := range want {
		for {
			p := r.admin(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id, Attrs: batchreq.AttrList{batchreq.NewAttr("resources_used", "")}}))
			if p.Code == 0 && len(p.Status) == 1 && len(p.Status[0].Attrs) == len(used) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the server did not take %s's usage from its MOM: %+v", id, p)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
