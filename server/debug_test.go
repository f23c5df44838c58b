package server

import (
	"net"
	"testing"
	"time"

	"gopbs/batchreq"
)

// TestSchedCycleRecorded: a cycle served by the server is recorded with
// its command, its number of started jobs and a duration covering the
// time the scheduler held the connection.
func TestSchedCycleRecorded(t *testing.T) {
	mom := newFakeMom(t)
	sched := newFakeSched(t)
	s := runServer(t, mom, sched.ln.Addr().(*net.TCPAddr).Port)
	c := privConn(t, s)
	setupCluster(t, c)
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("scheduling", "true"))); p.Code != 0 {
		t.Fatalf("set scheduling: %d", p.Code)
	}
	cy := sched.next(t)
	const hold = 200 * time.Millisecond
	time.Sleep(hold)
	cy.c.nc.Close()
	waitSchedIdle(t, s)
	rep := s.sched.CycleReport()
	if rep.Total != 1 || len(rep.Cycles) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if r := rep.Cycles[0]; r.Command != "cmd" || r.Started != 0 || r.Seconds < hold.Seconds() || r.Seconds > 10 {
		t.Errorf("cycle %+v, want command %q lasting at least %v", r, batchreq.SchedCommandName(batchreq.SCH_SCHEDULE_CMD), hold)
	}
}
