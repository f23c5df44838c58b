package link

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/jobfile"
	"gopbs/mom/jobexec"
	"gopbs/momproto"
	"gopbs/rpp"
)

// fakeMS is a mother superior: an RPP endpoint with output ports.
type fakeMS struct {
	t      *testing.T
	ep     *rpp.Endpoint
	out    [2]net.Listener
	cookie string
	event  int
}

func newFakeMS(t *testing.T) *fakeMS {
	t.Helper()
	pc, err := rpp.ListenReserved(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	ms := &fakeMS{t: t, ep: rpp.NewEndpoint(pc, &rpp.Options{Timeout: 50 * time.Millisecond}),
		cookie: "0123456789ABCDEF0123456789ABCDEF"}
	t.Cleanup(func() { ms.ep.Close() })
	for i := range ms.out {
		ms.out[i] = listenTCP(t)
		go func(l net.Listener) {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				go func() { io.Copy(io.Discard, c); c.Close() }()
			}
		}(ms.out[i])
	}
	return ms
}

func (ms *fakeMS) port(i int) int { return ms.out[i].Addr().(*net.TCPAddr).Port }

// call sends one IM request on s and returns the reply.
func (ms *fakeMS) call(s *rpp.Stream, id string, cmd int, body momproto.Body) *momproto.IMMessage {
	ms.t.Helper()
	ms.event++
	req := &momproto.IMMessage{IMHeader: momproto.IMHeader{Version: momproto.IM_PROTOCOL_VER, JobID: id,
		Cookie: ms.cookie, Command: cmd, Event: ms.event}, Body: body}
	if err := s.Send(req.Append(nil)); err != nil {
		ms.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := s.Recv(ctx)
	if err != nil {
		ms.t.Fatalf("%s: %v", momproto.IMCommandName(cmd), err)
	}
	rep, err := momproto.DecodeIM(b, func(*momproto.IMHeader) int { return cmd })
	if err != nil {
		ms.t.Fatalf("%s reply %q: %v", momproto.IMCommandName(cmd), b, err)
	}
	return rep
}

// TestSisterJobSurvivesRestart: a sister writes the job it joined to
// mom_priv/jobs (no HERE flag, the mother superior's address and output
// ports, its node id, the cookie) and its tasks to the .TK file; restarted
// with -p it answers the mother superior's requests for the job on a new
// stream, lists the job in jobs=, and IM_KILL_JOB ends it and its files.
// Restarted with -r it kills the tasks and forgets the job.
func TestSisterJobSurvivesRestart(t *testing.T) {
	requireUser(t)
	for _, mode := range []string{"p", "r"} {
		t.Run("mode="+mode, func(t *testing.T) {
			base := openDir(t, "gopbs-mom-", nil)
			first := startMomIn(t, nil, "", base, "none")
			dumpLogOnFailure(t, first)
			ms := newFakeMS(t)
			id := "12.vm"
			attrs := slices.Clone(jobAttrs(id, os.TempDir()))
			for i := range attrs {
				if attrs[i].Name == "exec_host" {
					attrs[i].Value = "ms/0+localhost/0"
				}
			}
			attrs = joinAttrs(attrs, ms.cookie, time.Now())
			s, err := ms.ep.Open(first.rmUDP)
			if err != nil {
				t.Fatal(err)
			}
			join := &momproto.IMJoinJob{NodeID: 1, NumNodes: 2, StdoutPort: ms.port(0), StderrPort: ms.port(1), Attrs: attrs}
			if rep := ms.call(s, id, momproto.IM_JOIN_JOB, join); rep.Command != momproto.IM_ALL_OKAY {
				t.Fatalf("join: %+v", rep)
			}
			spawn := &momproto.IMSpawnTask{TaskID: 2, GlobalID: "none", Argv: []string{"sleep", "60"}, Env: []string{"PBS_VNODENUM=1"}}
			if rep := ms.call(s, id, momproto.IM_SPAWN_TASK, spawn); rep.Command != momproto.IM_ALL_OKAY {
				t.Fatalf("spawn: %+v", rep)
			}
			if ids := first.m.jobIDs(); !slices.Equal(ids, []string{id}) {
				t.Errorf("jobs= %v, want the sister job", ids)
			}
			if d := first.m.diag(0); !strings.Contains(d, "job["+id+"]  state=RUNNING") || strings.Contains(d, "no local jobs") {
				t.Errorf("momctl -d does not list the sister job:\n%s", d)
			}
			jobs := filepath.Join(first.home, "mom_priv", "jobs")
			b, err := os.ReadFile(filepath.Join(jobs, id+".JB"))
			if err != nil {
				t.Fatal(err)
			}
			f, err := jobfile.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			tmInfo, ok := f.TM()
			if f.Svrflags&svrflagHere != 0 || f.State != 4 || f.Substate != 42 || f.ID != id || !ok ||
				tmInfo.Stdout != int32(ms.port(0)) || tmInfo.Stderr != int32(ms.port(1)) || tmInfo.NodeID != 1 ||
				f.Mom().ServerAddr != netip.MustParseAddr("127.0.0.1") {
				t.Errorf("sister job file: %+v, TM %+v", f, tmInfo)
			}
			if v, _ := f.Get("cookie", ""); v != ms.cookie {
				t.Errorf("cookie record %q", v)
			}
			recs, err := jobexec.ReadTaskFile(filepath.Join(jobs, id+".TK"))
			if err != nil || len(recs) != 1 || recs[0].TaskID != 2 || recs[0].Status != jobexec.TaskRunning {
				t.Fatalf("task file: %+v %v", recs, err)
			}
			sid := recs[0].SessionID
			first.stop()

			second := startMomIn(t, nil, "", base, mode)
			dumpLogOnFailure(t, second)
			if mode == "r" {
				if !gone(sid) {
					t.Error("-r left the sister's task running")
				}
				if left, _ := filepath.Glob(filepath.Join(jobs, id+".*")); len(left) > 0 {
					t.Errorf("-r left %v", left)
				}
				if ids := second.m.jobIDs(); len(ids) != 0 {
					t.Errorf("jobs= %v after -r", ids)
				}
				return
			}
			if ids := second.m.jobIDs(); !slices.Equal(ids, []string{id}) {
				t.Errorf("jobs= %v after -p, want the sister job", ids)
			}
			s2, err := ms.ep.Open(second.rmUDP)
			if err != nil {
				t.Fatal(err)
			}
			rep := ms.call(s2, id, momproto.IM_GET_TASKS, &momproto.Ints{Values: []int{0}})
			if ints, _ := rep.Body.(*momproto.Ints); rep.Command != momproto.IM_ALL_OKAY || ints == nil || !slices.Equal(ints.Values, []int{2}) {
				t.Errorf("IM_GET_TASKS after the restart: %+v %+v", rep, rep.Body)
			}
			// IM_GET_RESC describes the node; IM_GET_INFO finds nothing
			// posted (TM_POSTINFO is not defined by the specification).
			rep = ms.call(s2, id, momproto.IM_GET_RESC, &momproto.Ints{Values: []int{1}})
			if d, _ := rep.Body.(*momproto.IMData); rep.Command != momproto.IM_ALL_OKAY || d == nil ||
				!strings.HasPrefix(string(d.Data), "host=localhost,ncpus=") {
				t.Errorf("IM_GET_RESC: %+v %+v", rep, rep.Body)
			}
			rep = ms.call(s2, id, momproto.IM_GET_INFO, &momproto.IMGetInfo{Node: 1, Task: 2, Name: "x"})
			if ints, _ := rep.Body.(*momproto.Ints); rep.Command != momproto.IM_ERROR || ints == nil || ints.Values[0] != batchreq.PBSE_RMNOPARAM {
				t.Errorf("IM_GET_INFO: %+v %+v", rep, rep.Body)
			}
			// Only a mother superior numbers tasks.
			if rep := ms.call(s2, id, momproto.IM_GET_TID, &momproto.Ints{Values: []int{1}}); rep.Command != momproto.IM_ERROR {
				t.Errorf("IM_GET_TID to a sister: %+v", rep)
			}
			if rep := ms.call(s2, id, momproto.IM_KILL_JOB, momproto.Empty{}); rep.Command != momproto.IM_ALL_OKAY {
				t.Errorf("IM_KILL_JOB after the restart: %+v", rep)
			}
			if !gone(sid) {
				t.Error("IM_KILL_JOB left the re-attached task running")
			}
			if left, _ := filepath.Glob(filepath.Join(jobs, id+".*")); len(left) > 0 {
				t.Errorf("files left after IM_KILL_JOB: %v", left)
			}
			if rep := ms.call(s2, id, momproto.IM_POLL_JOB, momproto.Empty{}); rep.Command != momproto.IM_ERROR {
				t.Errorf("IM_POLL_JOB after the kill: %+v", rep)
			}
		})
	}
}

// answeringSister serves the IM requests of every stream opened to fs as
// a willing sister, and reports each request as "stream#:COMMAND".
func answeringSister(t *testing.T, fs *fakeSister) <-chan string {
	t.Helper()
	return slowSister(t, fs, 0)
}

// slowSister is answeringSister whose answers to IM_POLL_JOB take
// pollDelay (a sister on a loaded machine).
func slowSister(t *testing.T, fs *fakeSister, pollDelay time.Duration) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	seen := make(chan string, 100)
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
						time.Sleep(pollDelay)
					case momproto.IM_KILL_JOB:
						body = &momproto.IMUsage{}
					case momproto.IM_GET_TASKS:
						body = &momproto.Ints{Values: []int{3}}
					}
					s.Send(imReply(req, body).Append(nil))
					select {
					case seen <- fmt.Sprintf("%d:%s", n, momproto.IMCommandName(req.Command)):
					default:
					}
				}
			}()
		}
	}()
	return seen
}

// expectIM waits for the sister to get cmd and returns the stream number
// it came on.
func expectIM(t *testing.T, seen <-chan string, cmd string) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case s := <-seen:
			if n, c, _ := strings.Cut(s, ":"); c == cmd {
				return n
			}
		case <-timeout:
			t.Fatalf("the sister got no %s", cmd)
		}
	}
}

// TestMotherSuperiorRestart: a mother superior saves its output ports and
// next task id; restarted with -p it reaches its sister on a new stream,
// learns the tasks there (IM_GET_TASKS), goes on polling, and kills the
// job there at the end; restarted with -r it kills the job there at once
// and reports it aborted; with -P it aborts it there (IM_ABORT_JOB).
func TestMotherSuperiorRestart(t *testing.T) {
	requireUser(t)
	for _, mode := range []string{"p", "r", "P"} {
		t.Run("mode="+mode, func(t *testing.T) {
			fs := newFakeSister(t)
			seen := answeringSister(t, fs)
			srv := newFakeServer(t)
			srv.serve(acceptAll)
			base := openDir(t, "gopbs-mom-", nil)
			tweak := func(o *Options) {
				// Both MOMs number their opens from the same key, as
				// pbs_mom restarted within the second does (keys are
				// time() & 0xFFF), from the same reserved port: the
				// restarted MOM's streams may carry its old streams'
				// keys and indexes, and must reach the sister still.
				o.RPP = &rpp.Options{Timeout: 50 * time.Millisecond, Retry: 40, OpenKey: 100}
				o.RMPort = fs.port
				o.Resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
					if host == "sister" {
						return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
					}
					return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
				}
			}
			first := startMomIn(t, srv, "$check_poll_time 1\n", base, "none", tweak)
			dumpLogOnFailure(t, first)
			id := "40.testserver"
			if rep := launchMulti(t, first, id, "exec sleep 60\n"); rep.Choice != batchreq.BATCH_REPLY_CHOICE_Commit {
				t.Fatalf("Commit: %+v", rep)
			}
			joinedOn := expectIM(t, seen, "IM_JOIN_JOB")
			jb := filepath.Join(first.home, "mom_priv", "jobs", id+".JB")
			waitUntil(t, func() bool {
				b, _ := os.ReadFile(jb)
				f, err := jobfile.Parse(b)
				_, ok := f.Get("session_id", "")
				return err == nil && ok
			})
			b, _ := os.ReadFile(jb)
			f, _ := jobfile.Parse(b)
			if info, ok := f.TM(); !ok || info.Stdout <= 0 || info.Stderr <= 0 || info.NextTaskID != 2 || info.NodeID != 0 {
				t.Errorf("mother superior's job file TM info %+v (%v)", info, ok)
			}
			st, _ := first.eng.Status(id)
			first.stop()

			second := startMomIn(t, srv, "$check_poll_time 1\n", base, mode, tweak)
			dumpLogOnFailure(t, second)
			if mode == "P" {
				// Purged: no obit, the sister drops the job.
				if on := expectIM(t, seen, "IM_ABORT_JOB"); on == joinedOn {
					t.Errorf("IM_ABORT_JOB on the old stream %s", on)
				}
				if !gone(st.SessionID) {
					t.Error("-P left the job running")
				}
				return
			}
			if mode == "r" {
				if on := expectIM(t, seen, "IM_KILL_JOB"); on == joinedOn {
					t.Errorf("IM_KILL_JOB on the old stream %s", on)
				}
				nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
				obit := nextReq(t, srv, batchreq.PBS_BATCH_JobObit).req.Body.(*batchreq.JobObit)
				if obit.ExitStatus != jobexec.JOB_EXEC_INITABT {
					t.Errorf("obit exit status %d", obit.ExitStatus)
				}
				return
			}
			on := expectIM(t, seen, "IM_GET_TASKS")
			if on == joinedOn {
				t.Errorf("IM_GET_TASKS on the old stream %s", on)
			}
			expectIM(t, seen, "IM_POLL_JOB")
			mj := second.m.msJobFor(second.m.lookup(id))
			waitUntil(t, func() bool {
				mj.mu.Lock()
				defer mj.mu.Unlock()
				return slices.Equal(mj.remote[1], []int{3})
			})
			syscall.Kill(-st.SessionID, syscall.SIGKILL)
			expectIM(t, seen, "IM_KILL_JOB")
			nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
			nextReq(t, srv, batchreq.PBS_BATCH_JobObit)
		})
	}
}

// TestSlowSisterRelink: a sister whose usage answers come later than the
// poll period is tried on new streams. Each new stream makes the sister
// discard the one before (a HELLO1 with a new key reads as a restart), so
// the mother superior must go on with the newest, answered or not, and
// leave the old ones without a GOODBYE: the job's end (IM_KILL_JOB) then
// reaches the sister. Before, a relink whose poll went unanswered closed
// the new stream and kept the old one, dead at the sister: IM_KILL_JOB
// was lost and the sister's tasks outlived the job.
func TestSlowSisterRelink(t *testing.T) {
	requireUser(t)
	fs := newFakeSister(t)
	seen := slowSister(t, fs, 1500*time.Millisecond) // $check_poll_time is 1 s
	srv, tm := startMotherSuperior(t, fs)
	id := "41.testserver"
	if rep := launchMulti(t, tm, id, "exec sleep 60\n"); rep.Choice != batchreq.BATCH_REPLY_CHOICE_Commit {
		t.Fatalf("Commit: %+v", rep)
	}
	joinedOn := expectIM(t, seen, "IM_JOIN_JOB")
	// Wait until a relink's poll went unanswered: the sister has a poll
	// on a stream other than the join's.
	for on := joinedOn; on == joinedOn; {
		on = expectIM(t, seen, "IM_POLL_JOB")
	}
	var sid int
	waitUntil(t, func() bool {
		st, err := tm.eng.Status(id)
		sid = st.SessionID
		return err == nil && sid > 1
	})
	syscall.Kill(-sid, syscall.SIGKILL)
	expectIM(t, seen, "IM_KILL_JOB")
	nextReq(t, srv, batchreq.PBS_BATCH_StatusJob)
	nextReq(t, srv, batchreq.PBS_BATCH_JobObit)
}
