package server

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
)

// requestsOf decodes the batch requests of a captured byte stream.
func requestsOf(b []byte, mom bool) ([]*batchreq.Request, error) {
	r := dis.NewReader(bytes.NewReader(b))
	read := batchreq.ReadServerRequest
	if mom {
		read = batchreq.ReadRequest
	}
	var out []*batchreq.Request
	for {
		req, err := read(r)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, req)
	}
}

// TestCaptureJobLifecycleBytes replays capture 73 (qsub of a job, run,
// obit) against the server with a fake MOM and requires the server's
// requests to the MOM — the launch connection, the first StatusJob poll
// and the end-of-job CopyFiles/DeleteJob connection — to be the captured
// bytes exactly.
func TestCaptureJobLifecycleBytes(t *testing.T) {
	dir, ok := capture.SharedDir()
	if !ok {
		t.Skip("../shared/captures not available")
	}
	cp, err := capture.ReadFile(filepath.Join(dir, "73-job-lifecycle-full.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var submit, obit []*batchreq.Request
	var launch, poll, end []byte
	for _, c := range cp.Conns {
		switch c.Server.Port() {
		case batchreq.PBS_BATCH_SERVICE_PORT:
			reqs, err := requestsOf(c.Stream(true), false)
			if err != nil || len(reqs) == 0 {
				continue
			}
			switch reqs[0].Type {
			case batchreq.PBS_BATCH_QueueJob:
				submit = reqs
			case batchreq.PBS_BATCH_StatusJob, batchreq.PBS_BATCH_JobObit:
				if reqs[0].User == "pbs_mom" {
					obit = append(obit, reqs...)
				}
			}
		case batchreq.PBS_MOM_SERVICE_PORT:
			b := c.Stream(true)
			reqs, err := requestsOf(b, true)
			if err != nil || len(reqs) == 0 {
				t.Fatalf("MOM connection: %v", err)
			}
			switch reqs[0].Type {
			case batchreq.PBS_BATCH_QueueJob:
				launch = b
			case batchreq.PBS_BATCH_StatusJob:
				poll = b
			case batchreq.PBS_BATCH_CopyFiles:
				end = b
			}
		}
	}
	if submit == nil || len(obit) != 2 || launch == nil || poll == nil || end == nil {
		t.Fatalf("capture 73 lacks a connection: submit %d obit %d launch %d poll %d end %d", len(submit), len(obit), len(launch), len(poll), len(end))
	}

	mom := newFakeMom(t)
	s := runServerWith(t, mom, 0, func(s *Server) {
		s.now = func() time.Time { return time.Unix(1795310684, 0) } // start_time in the capture
		s.run.groupOf = func(string) string { return "alice" }
	})
	c := dialPrivileged(t, s.Addr())
	setupCluster(t, c)
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("next_job_number", "13"))); p.Code != 0 {
		t.Fatalf("next_job_number: %d", p.Code)
	}
	qc := dialPrivileged(t, s.Addr())
	for _, r := range submit {
		if r.Type == batchreq.PBS_BATCH_Disconnect {
			break
		}
		if p := qc.do(r); p.Code != 0 {
			t.Fatalf("replayed %s: %d %s", batchreq.RequestName(r.Type), p.Code, p.Text)
		}
	}
	if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "Scheduler", &batchreq.RunJob{JobID: "13.vm"})); p.Code != 0 {
		t.Fatalf("RunJob: %d %s", p.Code, p.Text)
	}
	mom.next(batchreq.PBS_BATCH_StatusJob)
	mom.next(batchreq.PBS_BATCH_Disconnect)
	waitFor(t, "poll connection end", func() bool { return len(mom.stream(1)) >= len(poll) })
	t.Logf("launch %d bytes, poll %d, end %d", len(launch), len(poll), len(end))
	if got := mom.stream(0); !bytes.Equal(got, launch) {
		t.Errorf("launch connection\n got %q\nwant %q", got, launch)
	}
	if got := mom.stream(1); !bytes.Equal(got, poll) {
		t.Errorf("poll connection\n got %q\nwant %q", got, poll)
	}
	for _, r := range obit {
		mc := dialPrivileged(t, s.Addr())
		if p := mc.do(r); p.Code != 0 {
			t.Fatalf("replayed %s: %d %s", batchreq.RequestName(r.Type), p.Code, p.Text)
		}
		mc.nc.Close()
	}
	mom.next(batchreq.PBS_BATCH_Disconnect)
	waitFor(t, "end connection", func() bool { return len(mom.stream(2)) >= len(end) })
	if got := mom.stream(2); !bytes.Equal(got, end) {
		t.Errorf("end-of-job connection\n got %q\nwant %q", got, end)
	}
}
