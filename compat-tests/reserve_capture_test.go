package compattests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopbs/batchreq"
	"gopbs/internal/capture"
)

// TestReserveFromTorqueQsub sends a GoPBS server the bytes the real
// TORQUE 2.5.13 qsub sends for `qsub -W reserve=y`: capture 28's
// submission (qsub -W depend=afterok:1.vm ...), whose -W attribute is
// replaced in place by reserve=y, the way qsub passes any -W name=value
// it does not interpret, and submit_args by the command line it would
// record. The job is accepted with reserve=y, which StatusJob reports
// after TORQUE's attributes; reserve=maybe is refused with the
// bad-attribute-value reply.
func TestReserveFromTorqueQsub(t *testing.T) {
	dir := requireCaptures(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: the replayed connection is authenticated through AuthenticateUser from a reserved port")
	}
	r := newReplayer(t)
	r.mustAdmin(t, "setup", clusterSetup([]string{"batch"})...)
	submit := func(value string) (*batchreq.Reply, []*batchreq.Request) {
		c, err := capture.ReadFile(filepath.Join(dir, "28-qsub-many-options.pcap"))
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
			t.Fatalf("capture 28 does not start with a QueueJob: %d requests", len(reqs))
		}
		qj := reqs[0].Body.(*batchreq.QueueJob)
		replaced := false
		for k, a := range qj.Attrs {
			switch a.Name {
			case "depend":
				qj.Attrs[k] = batchreq.NewAttr("reserve", value)
				replaced = true
			case "submit_args":
				qj.Attrs[k] = batchreq.NewAttr("submit_args", strings.Replace(a.Value, "-W depend=afterok:1.vm", "-W reserve="+value, 1))
			}
		}
		if !replaced {
			t.Fatal("capture 28's QueueJob has no depend attribute to replace")
		}
		rc := r.userConn(t, reqs[0].User)
		defer rc.nc.Close()
		p, err := rc.do(reqs[0].Append(nil))
		if err != nil {
			t.Fatal(err)
		}
		if p.Code != 0 {
			return p, nil
		}
		id := p.JobID
		for _, req := range reqs[1:] {
			if req.Type == batchreq.PBS_BATCH_Disconnect {
				break
			}
			switch b := req.Body.(type) {
			case *batchreq.JobID:
				b.ID = id
			case *batchreq.JobFile:
				b.JobID = id
			}
			if p2, err := rc.do(req.Append(nil)); err != nil || p2.Code != 0 {
				t.Fatalf("capture 28, %s: %v %+v", batchreq.RequestName(req.Type), err, p2)
			}
		}
		return p, reqs
	}
	p, _ := submit("y")
	if p.Code != 0 || p.JobID == "" {
		t.Fatalf("qsub -W reserve=y refused: %d %q", p.Code, p.Text)
	}
	st := r.admin(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "root", &batchreq.StatusReq{ID: p.JobID}))
	if st.Code != 0 || len(st.Status) != 1 {
		t.Fatalf("status %s: %d %q", p.JobID, st.Code, st.Text)
	}
	var names []string
	reserve := ""
	for _, a := range st.Status[0].Attrs {
		names = append(names, a.Name)
		if a.Name == "reserve" {
			reserve = a.Value
		}
		if a.Name == "submit_args" && !strings.Contains(a.Value, "-W reserve=y") {
			t.Errorf("submit_args = %q", a.Value)
		}
	}
	if reserve != "y" {
		t.Errorf("reserve = %q in %v", reserve, names)
	}
	if i, j := indexOf(names, "reserve"), indexOf(names, "submit_host"); i < j {
		t.Errorf("reserve is reported before TORQUE's submit_host: %v", names)
	}
	bad, _ := submit("maybe")
	if bad.Code != batchreq.PBSE_BADATVAL || bad.Text != "Illegal attribute or resource value for  reserve" {
		t.Errorf("reserve=maybe: %d %q, want %d (bad attribute value)", bad.Code, bad.Text, batchreq.PBSE_BADATVAL)
	}
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}
