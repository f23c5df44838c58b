package server

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"gopbs/batchreq"
)

// TestRerunReturnsOutputFromRemoteMom: the rerun of a job whose MOM is
// not on the server's host asks that MOM for the job's output (Rerun);
// the output the MOM returns (MvJobFile) waits in the server's spool and
// travels with the next launch to a remote MOM (MvJobFile before
// RdytoCommit), after which the spool is cleared. On the server's own
// host neither happens (spec 10 §6.1, §8.6).
func TestRerunReturnsOutputFromRemoteMom(t *testing.T) {
	mom := newFakeMom(t)
	s := runServerWith(t, mom, 0, func(s *Server) {
		s.run.Resolve = func(host string) []netip.Addr {
			if host == "vm2" {
				return []netip.Addr{netip.MustParseAddr("127.0.0.2")}
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		}
	})
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	if p := c.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "vm2", attr("np", "2"))); p.Code != 0 {
		t.Fatalf("node vm2: %d", p.Code)
	}
	momsReported(s)
	momc := privConn(t, s)
	runOn := func(id, node string) {
		t.Helper()
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id, Destination: node})); p.Code != 0 {
			t.Fatalf("RunJob on %s: %d %s", node, p.Code, p.Text)
		}
		mom.next(batchreq.PBS_BATCH_Commit)
	}
	rerun := func(id string) {
		t.Helper()
		if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_Rerun, "root", &batchreq.JobID{ID: id})); p.Code != 0 {
			t.Fatalf("Rerun: %d", p.Code)
		}
		mom.next(batchreq.PBS_BATCH_SignalJob)
		if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id})); p.Code != 0 {
			t.Fatalf("obit: %d", p.Code)
		}
		mom.next(batchreq.PBS_BATCH_DeleteJob)
		waitFor(t, "requeue", func() bool { return jobAttr(t, c, id, "job_state") == "Q" })
	}

	id := submit(t, c, "remote")
	runOn(id, "vm2")
	rerun(id)
	if !mom.seen(batchreq.PBS_BATCH_Rerun, id) {
		t.Fatal("no Rerun request to the remote MOM")
	}
	// The MOM returns the output, as pbs_mom does on Rerun.
	out, errOut := bytes.Repeat([]byte("first run\n"), 10000), []byte("oops\n") // stdout spans two chunks
	for _, f := range []struct {
		typ  int
		data []byte
	}{{batchreq.StdOut, out[:65536]}, {batchreq.StdOut, out[65536:]}, {batchreq.StdErr, errOut}} {
		seq := 0
		if f.typ == batchreq.StdOut && len(f.data) != 65536 {
			seq = 1
		}
		req := batchreq.NewRequest(batchreq.PBS_BATCH_MvJobFile, "pbs_mom", &batchreq.JobFile{Seq: seq, FileType: f.typ, JobID: id, Data: f.data})
		if p := momc.do(req); p.Code != 0 {
			t.Fatalf("MvJobFile: %d %s", p.Code, p.Text)
		}
	}
	spool := filepath.Join(s.cfg.Home, "spool", id+".OU")
	if b, err := os.ReadFile(spool); err != nil || !bytes.Equal(b, out) {
		t.Fatalf("server spool %s: %d bytes, %v", spool, len(b), err)
	}
	// An unprivileged MvJobFile is refused.
	uc := dialUser(t, s.Addr())
	authenticate(t, s, uc, "alice")
	if p := uc.do(batchreq.NewRequest(batchreq.PBS_BATCH_MvJobFile, "alice", &batchreq.JobFile{FileType: batchreq.StdOut, JobID: id, Data: []byte("x")})); p.Code != batchreq.PBSE_PERM {
		t.Errorf("unprivileged MvJobFile: code %d", p.Code)
	}

	// The next launch on a remote MOM carries the output.
	before := len(mom.reqsOf(batchreq.PBS_BATCH_MvJobFile))
	runOn(id, "vm2")
	var got [][]byte
	for _, r := range mom.reqsOf(batchreq.PBS_BATCH_MvJobFile)[before:] {
		jf := r.Body.(*batchreq.JobFile)
		if jf.JobID != id {
			t.Errorf("MvJobFile for %q", jf.JobID)
		}
		got = append(got, []byte{byte('0' + jf.FileType), byte('0' + jf.Seq)})
		got = append(got, jf.Data)
	}
	want := [][]byte{[]byte("20"), out[:65536], []byte("21"), out[65536:], []byte("30"), errOut}
	if len(got) != len(want) {
		t.Fatalf("launch sent %d MvJobFile chunks, want 3", len(got)/2)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("MvJobFile item %d: %.20q, want %.20q", i, got[i], want[i])
		}
	}
	if _, err := os.Stat(spool); !os.IsNotExist(err) {
		t.Errorf("spool file left after the launch: %v", err)
	}

	// On the server's own host: no Rerun request.
	local := submit(t, c, "local")
	runOn(local, "vm")
	rerun(local)
	if mom.seen(batchreq.PBS_BATCH_Rerun, local) {
		t.Error("Rerun sent to the MOM on the server's host")
	}
}

// reqsOf returns the requests of type typ received so far.
func (m *fakeMom) reqsOf(typ int) []*batchreq.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*batchreq.Request
	for _, r := range m.reqs {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}
