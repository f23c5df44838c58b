package compattests

// This file holds TestMomReplayJobs, the MOM's job captures replayed:
// launches, polls, signals, deletion, whole lifecycles and staging, with
// the launches and dismissals the captures do not hold.

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
)

// TestMomReplayJobs replays the job launch, the status polls and the end
// of job of captures 73 (full lifecycle, with the MOM's pre-obit and
// obit answered from the capture) and 35 (qrun of a long job).
func TestMomReplayJobs(t *testing.T) {
	requireCaptures(t)
	const suite = "mom-jobs"
	m := startCaptureMom(t, "$check_poll_time 1\n")
	uid, gid := ensureUser(t, "alice")
	m.ns.home(t, "alice", uid, gid)

	results.run(t, suite, "73 launch, poll, pre-obit, obit, stage-out and delete", "", func(t *testing.T) string {
		c := loadCapture(t, 73)
		toMom := momConns(c, 15002)
		var toServer []*capture.Conn
		for _, conn := range momConns(c, 15001) {
			if conn.Client.Port() == 970 { // the MOM's privileged port in the capture
				toServer = append(toServer, conn)
			}
		}
		if len(toMom) != 3 || len(toServer) != 2 {
			t.Fatalf("capture 73: %d connections to the MOM, %d from it", len(toMom), len(toServer))
		}
		var diffs []string
		add := func(what, d string) {
			if d != "" {
				diffs = append(diffs, what+": "+d)
			}
		}
		add("launch", replayBatchConn(t, m, toMom[0]))
		add("status poll", replayBatchConn(t, m, toMom[1]))
		add("pre-obit", serveMomCall(t, m, toServer[0], true))
		add("obit", serveMomCall(t, m, toServer[1], false))
		add("stage-out and delete", replayBatchConn(t, m, toMom[2]))
		if b, err := os.ReadFile(filepath.Join(m.ns.homes, "alice", "lifecycle.o13")); err != nil {
			add("output", "not delivered to /home/alice/lifecycle.o13: "+err.Error())
		} else {
			t.Logf("delivered stdout: %q", b)
		}
		return strings.Join(diffs, "\n")
	})

	results.run(t, suite, "35 qrun launch and first status poll", "", func(t *testing.T) string {
		c := loadCapture(t, 35)
		toMom := momConns(c, 15002)
		if len(toMom) != 2 {
			t.Fatalf("capture 35: %d connections to the MOM", len(toMom))
		}
		d := replayBatchConn(t, m, toMom[0])
		if d2 := replayBatchConn(t, m, toMom[1]); d2 != "" {
			d += "\n" + d2
		}
		return strings.TrimSpace(d)
	})
	// Job 9.vm of capture 35 is running now: the requests that reached it.
	results.run(t, suite, "57 qmsg to the running job", "", func(t *testing.T) string {
		return replayJobCapture(t, m, loadCapture(t, 57))
	})
	results.run(t, suite, "58 qsig SIGUSR1: the job dies, obit 266, stage-out and delete", "", func(t *testing.T) string {
		return replayJobCapture(t, m, loadCapture(t, 58))
	})
	killJob(t, m, "9.vm") // in case 58 did not end it

	// The launch of job 36.vm is not in the captures: launch 35's job
	// under that id, then replay suspend and resume.
	results.run(t, suite, "99 qsig suspend, 100 qsig resume of a running job", "", func(t *testing.T) string {
		launchAs(t, m, momConns(loadCapture(t, 35), 15002)[0], "9.vm", "36.vm")
		d := replayJobCapture(t, m, loadCapture(t, 99))
		if d2 := replayJobCapture(t, m, loadCapture(t, 100)); d2 != "" {
			d += "\n" + d2
		}
		killJob(t, m, "36.vm")
		dismissJob(t, m)
		return strings.TrimSpace(d)
	})

	results.run(t, suite, "62 qdel of a running job: SIGTERM, obit 271, stage-out and delete", "", func(t *testing.T) string {
		launchAs(t, m, momConns(loadCapture(t, 35), 15002)[0], "9.vm", "10.vm")
		return replayJobCapture(t, m, loadCapture(t, 62))
	})

	// Whole lifecycles, each launched and finished within its capture.
	for _, sc := range []struct {
		id   int
		name string
	}{
		{89, "89 job run (keep_completed)"},
		{94, "94 stage-in before the launch, stage-out and stage-in deletion after"},
		{95, "95 job with account and walltime"},
		{96, "96 walltime exceeded: killed, obit -10"},
		{84, "84 two jobs one after the other (afterany dependency)"},
		{85, "85 a job exiting 3, then its dependant"},
		{86, "86 two jobs, the second exiting 3 (beforeany)"},
		{88, "88 job of a sync-count test"},
	} {
		results.run(t, suite, sc.name, "", func(t *testing.T) string {
			c := loadCapture(t, sc.id)
			if sc.id == 94 {
				return replayStagingCapture(t, m, c, uid, gid)
			}
			return replayJobCapture(t, m, c)
		})
	}
}

// launchAs replays a captured launch connection with the job id from
// replaced by to (in the requests and the hashname), without comparing
// the replies beyond requiring success, and then polls the job as the
// server does right after a launch.
func launchAs(t *testing.T, m *momUnderTest, conn *capture.Conn, from, to string) {
	t.Helper()
	launchRewritten(t, m, conn, func(req *batchreq.Request) {
		switch b := req.Body.(type) {
		case *batchreq.QueueJob:
			b.JobID = to
			for i := range b.Attrs {
				if b.Attrs[i].Value == from {
					b.Attrs[i].Value, b.Attrs[i].Size = to, 0
				}
			}
		case *batchreq.JobFile:
			b.JobID = to
		case *batchreq.JobID:
			b.ID = to
		}
	})
	// The server's poll right after the launch, which learns session_id.
	p := m.batchConn(t, 20*time.Second)
	defer p.Close()
	p.Must(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "PBS_Server", &batchreq.StatusReq{ID: to}))
}

// launchRewritten replays a captured launch connection (QueueJob to
// Commit, then Disconnect) to the MOM with each request passed through
// rewrite first, without comparing the replies beyond requiring success.
func launchRewritten(t *testing.T, m *momUnderTest, conn *capture.Conn, rewrite func(*batchreq.Request)) {
	t.Helper()
	c := m.batchConn(t, 20*time.Second)
	defer c.Close()
	in := dis.NewReader(bytes.NewReader(conn.Stream(true)))
	committed := false
	for {
		req, err := batchreq.ReadRequest(in)
		if err != nil {
			if committed {
				return
			}
			t.Fatalf("captured launch: %v", err)
		}
		rewrite(req)
		if req.Type == batchreq.PBS_BATCH_Disconnect {
			if _, err := c.NetConn().Write(req.Append(nil)); err != nil {
				t.Fatal(err)
			}
			return
		}
		c.Must(req)
		committed = req.Type == batchreq.PBS_BATCH_Commit
	}
}

// dismissJob answers the MOM's pre-obit for a killed job with
// PBSE_UNKJOBID, so that it forgets the job without an obit.
func dismissJob(t *testing.T, m *momUnderTest) {
	t.Helper()
	m.srvTCP.(*net.TCPListener).SetDeadline(time.Now().Add(20 * time.Second))
	c, err := m.srvTCP.Accept()
	if err != nil {
		t.Fatalf("no pre-obit from the MOM: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := batchreq.ReadRequest(dis.NewReader(bufio.NewReader(c))); err != nil {
		t.Fatal(err)
	}
	c.Write(batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, "", "").Append(nil))
}

// replayStagingCapture replays capture 94: a stage-in (CopyFiles before
// the job), the launch, the first poll, the pre-obit and obit, then the
// stage-out, the deletion of the staged-in file and DeleteJob; and
// checks what the job made of the staged-in file.
func replayStagingCapture(t *testing.T, m *momUnderTest, c *capture.Capture, uid, gid int) string {
	// The stage-in source of the capture, owned by alice.
	home := filepath.Join(m.ns.homes, "alice")
	in := filepath.Join(home, "in.txt")
	if err := os.WriteFile(in, []byte("staged in\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(in, uid, gid); err != nil {
		t.Fatal(err)
	}
	d := replayJobCapture(t, m, c)
	// The job wrote the staged-in text upper-cased to out.txt in its
	// home, which the stage-out left in place (same path).
	if b, err := os.ReadFile(filepath.Join(home, "out.txt")); err != nil || string(b) != "STAGED IN\n" {
		d = strings.TrimSpace(fmt.Sprintf("%s\nthe job's out.txt holds %q (%v), want %q", d, b, err, "STAGED IN\n"))
	}
	return d
}
