package link

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
