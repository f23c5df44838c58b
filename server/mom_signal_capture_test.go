package server

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"gopbs/batchreq"
	"gopbs/internal/capture"
	"gopbs/server/link/running"
)

// capturedSignalConn returns the bytes of the first connection to the
// MOM in a capture that carries a SignalJob, and that request.
func capturedSignalConn(t *testing.T, file string) ([]byte, *batchreq.Request) {
	t.Helper()
	cp, err := capture.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cp.Conns {
		if c.Server.Port() != batchreq.PBS_MOM_SERVICE_PORT {
			continue
		}
		b := c.Stream(true)
		reqs, err := requestsOf(b, true)
		if err == nil && len(reqs) > 0 && reqs[0].Type == batchreq.PBS_BATCH_SignalJob {
			return b, reqs[0]
		}
	}
	t.Fatalf("%s has no SignalJob to the MOM", file)
	return nil, nil
}

// signalConn returns the bytes of the n-th connection (from 1) on which
// the fake MOM received a SignalJob.
func signalConn(t *testing.T, mom *fakeMom, n int) []byte {
	t.Helper()
	for i := 0; i < mom.connCount(); i++ {
		b := mom.stream(i)
		if reqs, err := requestsOf(b, true); err == nil && len(reqs) > 0 && reqs[0].Type == batchreq.PBS_BATCH_SignalJob {
			if n--; n == 0 {
				return b
			}
		}
	}
	t.Fatal("the MOM did not receive that many SignalJob connections")
	return nil
}

// TestCaptureSignalJobBytes: the SignalJob connections the server opens
// to the MOM for qsig -s suspend/resume (captures 99, 100) are TORQUE's
// bytes, six-byte extension included; for qdel's SIGTERM (capture 62)
// they are too, but for the extension's content, which is whatever
// memory TORQUE's server had there.
func TestCaptureSignalJobBytes(t *testing.T) {
	dir, ok := capture.SharedDir()
	if !ok {
		t.Skip("../shared/captures not available")
	}
	for _, tc := range []struct {
		file  string
		steps []string // client requests: signal names, or "qdel"
		exact bool
	}{
		{"99-qsig-suspend-running.pcap", []string{"suspend"}, true},
		{"100-qsig-resume-running.pcap", []string{"suspend", "resume"}, true},
		{"62-qdel-running.pcap", []string{"qdel"}, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want, wreq := capturedSignalConn(t, filepath.Join(dir, tc.file))
			if len(wreq.Extension) != len(running.StaleExtension) {
				t.Fatalf("captured extension %q", wreq.Extension)
			}
			if !tc.exact {
				want = bytes.Replace(want, []byte(wreq.Extension), []byte(running.StaleExtension), 1)
			}
			id := wreq.ObjectID()
			mom := newFakeMom(t)
			s := runServer(t, mom, 0)
			c := privConn(t, s)
			setupCluster(t, c)
			momsReported(s)
			seq, _, _ := strings.Cut(id, ".")
			if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("next_job_number", seq))); p.Code != 0 {
				t.Fatalf("next_job_number: %d", p.Code)
			}
			if got := submit(t, c, "sig"); got != id {
				t.Fatalf("job id %q, want %q", got, id)
			}
			if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
				t.Fatalf("RunJob: %d", p.Code)
			}
			mom.next(batchreq.PBS_BATCH_Commit)
			for _, step := range tc.steps {
				req := batchreq.NewRequest(batchreq.PBS_BATCH_SignalJob, "root", &batchreq.SignalJob{JobID: id, Signal: step})
				if step == "qdel" {
					req = batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "root",
						&batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id})
				}
				if p := c.do(req); p.Code != 0 {
					t.Fatalf("%s: %d", step, p.Code)
				}
				mom.next(batchreq.PBS_BATCH_SignalJob)
			}
			waitFor(t, "the MOM connections to close", mom.idle)
			if got := signalConn(t, mom, len(tc.steps)); !bytes.Equal(got, want) {
				t.Errorf("SignalJob connection\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestCaptureCheckpointJobReply: qchkpt of a running job that is not
// checkpointable (capture 65) gets TORQUE's reply byte for byte, and
// nothing is relayed to the MOM.
func TestCaptureCheckpointJobReply(t *testing.T) {
	dir, ok := capture.SharedDir()
	if !ok {
		t.Skip("../shared/captures not available")
	}
	cp, err := capture.ReadFile(filepath.Join(dir, "65-qchkpt-running-retry.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var req *batchreq.Request
	var want []byte
	for _, c := range cp.Conns {
		if c.Server.Port() != batchreq.PBS_BATCH_SERVICE_PORT {
			continue
		}
		if reqs, err := requestsOf(c.Stream(true), false); err == nil && len(reqs) > 0 && reqs[0].Type == batchreq.PBS_BATCH_CheckpointJob {
			req, want = reqs[0], c.Stream(false)
		}
	}
	if req == nil {
		t.Fatal("capture 65 has no CheckpointJob")
	}
	id := req.ObjectID()
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	seq, _, _ := strings.Cut(id, ".")
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("next_job_number", seq))); p.Code != 0 {
		t.Fatalf("next_job_number: %d", p.Code)
	}
	if got := submit(t, c, "chk"); got != id {
		t.Fatalf("job id %q, want %q", got, id)
	}
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id})); p.Code != 0 {
		t.Fatalf("RunJob: %d", p.Code)
	}
	mom.next(batchreq.PBS_BATCH_Commit)
	waitFor(t, "the launch to finish", mom.idle)
	conns := mom.connCount()
	p := c.do(req)
	if got := p.Append(nil); !bytes.Equal(got, want) {
		t.Errorf("reply\n got %q\nwant %q", got, want)
	}
	if mom.seen(batchreq.PBS_BATCH_CheckpointJob, id) || mom.connCount() > conns+1 {
		t.Error("a non-checkpointable job's checkpoint was relayed to the MOM")
	}
}
