package link

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/mom/jobexec"
	"gopbs/momproto"
)

// imSeen is an IM request a fake sister got: the stream it came on (in
// accept order, from 1), its command and job.
type imSeen struct {
	stream int
	cmd    int
	job    string
}

// recordingSister serves every stream opened to fs as a willing sister
// and reports each request it gets, and each stream's end as a request
// with command -1.
func recordingSister(t *testing.T, fs *fakeSister) <-chan imSeen {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	seen := make(chan imSeen, 1000)
	go func() {
		for n := 1; ; n++ {
			s, err := fs.ep.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				for {
					b, err := s.Recv(ctx)
					if err != nil {
						seen <- imSeen{stream: n, cmd: -1}
						return
					}
					req, err := momproto.DecodeIM(b, nil)
					if err != nil {
						continue
					}
					var body momproto.Body = momproto.Empty{}
					switch req.Command {
					case momproto.IM_POLL_JOB:
						body = &momproto.IMUsage{HasExiting: true}
					case momproto.IM_KILL_JOB:
						body = &momproto.IMUsage{}
					}
					s.Send(imReply(req, body).Append(nil))
					seen <- imSeen{stream: n, cmd: req.Command, job: req.JobID}
				}
			}()
		}
	}()
	return seen
}

// TestJobsShareSisterStream: two multi-node jobs running at once with the
// same sister use one IM stream to it. A mother superior opens all its
// streams from one RPP endpoint, and a sister takes a HELLO1 with a new key
// from the same address and port for a restart, discarding the streams it
// had from there (spec 10 §2.3): one stream per job made the two jobs
// knock out each other's stream, re-opening in turn, and lost what was in
// flight. Here every request of both jobs, from the joins through the
// polls to each job's IM_KILL_JOB, arrives on the first stream; the end
// of the first job does not close it under the second, and the stream
// ends (GOODBYE) only after the last job using it.
func TestJobsShareSisterStream(t *testing.T) {
	requireUser(t)
	fs := newFakeSister(t)
	seen := recordingSister(t, fs)
	srv, tm := startMotherSuperior(t, fs)
	ids := []string{"50.testserver", "51.testserver"}
	for _, id := range ids {
		if rep := launchMulti(t, tm, id, "exec sleep 60\n"); rep.Choice != batchreq.BATCH_REPLY_CHOICE_Commit {
			t.Fatalf("Commit of %s: %+v", id, rep)
		}
	}
	// expect reads what the sister got until want holds of a request,
	// failing on a request on any stream but the first, or on the end
	// of the first while jobs still use it.
	expect := func(what string, want func(imSeen) bool) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case s := <-seen:
				if s.stream != 1 {
					t.Fatalf("%s %s on stream %d: the jobs do not share one stream", momproto.IMCommandName(s.cmd), s.job, s.stream)
				}
				if want(s) {
					return
				}
				if s.cmd == -1 {
					t.Fatalf("the stream ended while waiting for %s", what)
				}
			case <-timeout:
				t.Fatalf("the sister got no %s", what)
			}
		}
	}
	polled := map[string]int{}
	expect("two polls of each job", func(s imSeen) bool {
		if s.cmd == momproto.IM_POLL_JOB {
			polled[s.job]++
		}
		return polled[ids[0]] >= 2 && polled[ids[1]] >= 2
	})
	// The first job ends: its IM_KILL_JOB, then the second goes on
	// being polled on the same stream.
	for i, id := range ids {
		var sid int
		waitUntil(t, func() bool {
			st, err := tm.eng.Status(id)
			sid = st.SessionID
			return err == nil && sid > 1
		})
		syscall.Kill(-sid, syscall.SIGKILL)
		expect("IM_KILL_JOB of "+id, func(s imSeen) bool { return s.cmd == momproto.IM_KILL_JOB && s.job == id })
		nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
		if obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit); obit.JobID != id {
			t.Errorf("obit of %s, want %s", obit.JobID, id)
		}
		if i == 0 {
			n := 0
			expect("polls of "+ids[1]+" after the end of "+id, func(s imSeen) bool {
				if s.cmd == momproto.IM_POLL_JOB && s.job == ids[1] {
					n++
				}
				return n >= 2
			})
		}
	}
	expect("the stream's end after the last job", func(s imSeen) bool { return s.cmd == -1 })
}

// TestSisterStreamEndOrphansAllJobs: a sister serves all the jobs of a
// mother superior on the one stream it opened; when that stream ends,
// every job it served waits for the mother superior and, as it does not
// come back, is killed, tasks and all (was: only the job joined last on
// the stream, the others' tasks outliving their jobs).
func TestSisterStreamEndOrphansAllJobs(t *testing.T) {
	requireUser(t)
	tm := startMomIn(t, nil, "$timeout 1\n$check_poll_time 1\n", openDir(t, "gopbs-mom-", nil), "none")
	dumpLogOnFailure(t, tm)
	ms := newFakeMS(t)
	s, err := ms.ep.Open(tm.rmUDP)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"60.vm", "61.vm"}
	var sids []int
	for _, id := range ids {
		attrs := slices.Clone(jobAttrs(id, os.TempDir()))
		for i := range attrs {
			if attrs[i].Name == "exec_host" {
				attrs[i].Value = "ms/0+localhost/0"
			}
		}
		attrs = joinAttrs(attrs, ms.cookie, time.Now())
		join := &momproto.IMJoinJob{NodeID: 1, NumNodes: 2, StdoutPort: ms.port(0), StderrPort: ms.port(1), Attrs: attrs}
		if rep := ms.call(s, id, momproto.IM_JOIN_JOB, join); rep.Command != momproto.IM_ALL_OKAY {
			t.Fatalf("join of %s: %+v", id, rep)
		}
		spawn := &momproto.IMSpawnTask{TaskID: 2, GlobalID: "none", Argv: []string{"sleep", "60"}, Env: []string{"PBS_VNODENUM=1"}}
		if rep := ms.call(s, id, momproto.IM_SPAWN_TASK, spawn); rep.Command != momproto.IM_ALL_OKAY {
			t.Fatalf("spawn in %s: %+v", id, rep)
		}
		recs, err := jobexec.ReadTaskFile(filepath.Join(tm.home, "mom_priv", "jobs", id+".TK"))
		if err != nil || len(recs) != 1 {
			t.Fatalf("task file of %s: %+v %v", id, recs, err)
		}
		sids = append(sids, recs[0].SessionID)
	}
	s.Close()
	for _, id := range ids {
		waitLog(t, tm, id, "stream to mother superior ended")
	}
	for i, sid := range sids {
		waitUntil(t, func() bool { return gone(sid) })
		waitUntil(t, func() bool { return !slices.Contains(tm.m.jobIDs(), ids[i]) })
	}
}
