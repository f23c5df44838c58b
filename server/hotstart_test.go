package server

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/server/state"
)

// TestHotStart: a rerunnable job that qterm -t immediate requeued keeps
// its hosts (exec_host), and pbs_server -t hot runs it there again once
// the node is up; a warm start leaves it queued (spec 12 §16.1).
func TestHotStart(t *testing.T) {
	for _, init := range []string{InitHot, InitWarm} {
		t.Run(init, func(t *testing.T) {
			mom := newFakeMom(t)
			mom.mu.Lock()
			mom.reject[batchreq.PBS_BATCH_HoldJob] = batchreq.PBSE_NOSUP // no checkpoints: the job is requeued
			mom.mu.Unlock()
			home := t.TempDir()
			resolve := func(s *Server) {
				s.run.Resolve = func(host string) []netip.Addr {
					if host == "vm2" {
						return []netip.Addr{netip.MustParseAddr("127.0.0.2")}
					}
					return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
				}
			}
			s := runServerAt(t, home, InitCreate, mom, 0, resolve)
			c := privConn(t, s)
			setupCluster(t, c)
			momsReported(s)
			if p := c.do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_NODE, "vm2", attr("np", "2"))); p.Code != 0 {
				t.Fatalf("node vm2: %d", p.Code)
			}
			momsReported(s)
			id := submit(t, c, "hot")
			if p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id, Destination: "vm2"})); p.Code != 0 {
				t.Fatalf("RunJob: %d", p.Code)
			}
			mom.next(batchreq.PBS_BATCH_Commit)
			done := make(chan *batchreq.Reply, 1)
			go func() {
				done <- c.do(batchreq.NewRequest(batchreq.PBS_BATCH_Shutdown, "root", &batchreq.Shutdown{Manner: batchreq.SHUT_IMMEDIATE}))
			}()
			mom.next(batchreq.PBS_BATCH_SignalJob)
			momc := privConn(t, s)
			if p := momc.do(batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom", &batchreq.JobObit{JobID: id, ExitStatus: 265})); p.Code != 0 {
				t.Fatalf("obit: %d", p.Code)
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("shutdown did not finish")
			}
			<-s.Done()

			s = runServerAt(t, home, init, mom, 0, func(s *Server) {
				resolve(s)
				s.run.HotStartInterval = 50 * time.Millisecond
			})
			c = privConn(t, s)
			if eh := jobAttr(t, c, id, "exec_host"); !strings.HasPrefix(eh, "vm2/") {
				t.Fatalf("requeued job's exec_host %q, want its host vm2 kept", eh)
			}
			// vm2's MOM says hello and reports.
			s.mu.Lock()
			s.nodeByName["vm2"].State &^= state.NodeStateUnreported
			s.mu.Unlock()
			if init == InitWarm {
				time.Sleep(300 * time.Millisecond)
				if st := jobAttr(t, c, id, "job_state"); st != "Q" {
					t.Errorf("after a warm start: state %q, want Q", st)
				}
				return
			}
			waitFor(t, "the hot start to run the job", func() bool { return jobAttr(t, c, id, "job_state") == "R" })
			if q := mom.next(batchreq.PBS_BATCH_QueueJob).Body.(*batchreq.QueueJob); q.JobID != id || q.Destination != "vm2" {
				t.Errorf("hot start sent %s to %s", q.JobID, q.Destination)
			}
			if eh := jobAttr(t, c, id, "exec_host"); !strings.HasPrefix(eh, "vm2/") {
				t.Errorf("hot-started job's exec_host %q", eh)
			}
		})
	}
}
