package compattests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/capture"
)

// TestReservationQueueFromTorqueQsub sends a GoPBS server the bytes the
// real TORQUE 2.5.13 qsub sends for `qsub -q R1 sleep20.sh` (issue 17):
// capture 27's submission (`qsub sleep20.sh`, by alice: QueueJob,
// JobScript, RdytoCommit, Commit) with the destination and submit_args
// that `-q R1` gives, re-encoded, after alice made reservation R1 (one
// node, an hour from now) with ResvSubmit. The job is queued in R1, the
// reservation's queue; its comment says when R1 begins. bob, who is not
// among R1's users, is refused by the queue's user ACL, and capture 28's
// submission (`qsub ... -q batch -W depend=...`) with the -W attribute
// replaced by x=ADVRES:R1 lands in R1 too.
func TestReservationQueueFromTorqueQsub(t *testing.T) {
	dir := requireCaptures(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: the replayed connections are authenticated through AuthenticateUser from a reserved port")
	}
	r := newReplayer(t)
	r.mustAdmin(t, "setup", clusterSetup([]string{"batch"})...)
	r.momUp(t, nil)

	alice := r.userConn(t, "alice")
	defer alice.nc.Close()
	start := time.Now().Add(time.Hour)
	mk := batchreq.NewRequest(batchreq.PBS_BATCH_ResvSubmit, "alice", &batchreq.ResvSubmit{Attrs: batchreq.AttrList{
		batchreq.NewAttr(batchreq.ATTR_resv_start, fmt.Sprint(start.Unix())),
		batchreq.NewAttr(batchreq.ATTR_resv_end, fmt.Sprint(start.Add(time.Hour).Unix())),
		batchreq.NewAttr(batchreq.ATTR_resv_nodect, "1"),
	}})
	p, err := alice.do(mk.Append(nil))
	if err != nil || p.Code != 0 || p.JobID != "R1" {
		t.Fatalf("ResvSubmit: %v %+v", err, p)
	}

	// submit replays capture name's submission from user with its first
	// request changed by edit; it returns the QueueJob reply and the id.
	submit := func(name, user string, edit func(*batchreq.QueueJob)) *batchreq.Reply {
		t.Helper()
		c, err := capture.ReadFile(filepath.Join(dir, name))
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
		if len(reqs) == 0 || reqs[0].Type != batchreq.PBS_BATCH_QueueJob {
			t.Fatalf("%s does not start with a QueueJob", name)
		}
		edit(reqs[0].Body.(*batchreq.QueueJob))
		reqs[0].User = user
		rc := r.userConn(t, user)
		defer rc.nc.Close()
		p, err := rc.do(reqs[0].Append(nil))
		if err != nil {
			t.Fatal(err)
		}
		if p.Code != 0 {
			return p
		}
		for _, req := range reqs[1:] {
			if req.Type == batchreq.PBS_BATCH_Disconnect {
				break
			}
			req.User = user
			switch b := req.Body.(type) {
			case *batchreq.JobID:
				b.ID = p.JobID
			case *batchreq.JobFile:
				b.JobID = p.JobID
			}
			if p2, err := rc.do(req.Append(nil)); err != nil || p2.Code != 0 {
				t.Fatalf("%s, %s: %v %+v", name, batchreq.RequestName(req.Type), err, p2)
			}
		}
		return p
	}
	toR1 := func(qj *batchreq.QueueJob) {
		if qj.Destination != "" {
			t.Fatalf("capture 27's destination is %q", qj.Destination)
		}
		qj.Destination = "R1"
		for k, a := range qj.Attrs {
			if a.Name == "submit_args" {
				qj.Attrs[k] = batchreq.NewAttr("submit_args", "-q R1 "+a.Value) // Size re-counted
			}
		}
	}
	attr := func(id, name string) string {
		st := r.admin(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: id}))
		if st.Code != 0 || len(st.Status) != 1 {
			t.Fatalf("status %s: %d %q", id, st.Code, st.Text)
		}
		for _, a := range st.Status[0].Attrs {
			if a.Name == name {
				return a.Value
			}
		}
		return ""
	}
	p = submit("27-qsub-plain-script.pcap", "alice", toR1)
	if p.Code != 0 {
		t.Fatalf("qsub -q R1 as alice: %d %q", p.Code, p.Text)
	}
	if q := attr(p.JobID, "queue"); q != "R1" {
		t.Errorf("job %s is in queue %q, want R1", p.JobID, q)
	}
	// the server comments it within a tick
	deadline := time.Now().Add(10 * time.Second)
	for !strings.HasPrefix(attr(p.JobID, "comment"), "Not Running: reservation R1 begins at ") {
		if time.Now().After(deadline) {
			t.Fatalf("comment of %s: %q", p.JobID, attr(p.JobID, "comment"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p := submit("27-qsub-plain-script.pcap", "bob", toR1); p.Code != batchreq.PBSE_PERM {
		t.Errorf("qsub -q R1 as bob: %d %q, want %d", p.Code, p.Text, batchreq.PBSE_PERM)
	}
	p = submit("28-qsub-many-options.pcap", "alice", func(qj *batchreq.QueueJob) {
		for k, a := range qj.Attrs {
			if a.Name == "depend" {
				qj.Attrs[k] = batchreq.NewAttr("x", "ADVRES:R1")
			}
		}
	})
	if p.Code != 0 {
		t.Fatalf("qsub -W x=ADVRES:R1: %d %q", p.Code, p.Text)
	}
	if q := attr(p.JobID, "queue"); q != "R1" {
		t.Errorf("-W x=ADVRES:R1: job %s is in queue %q, want R1", p.JobID, q)
	}
}
