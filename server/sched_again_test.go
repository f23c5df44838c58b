package server

import (
	"net"
	"testing"
	"time"

	"gopbs/batchreq"
)

// TestSchedulerTriggerDuringCycle: a job submitted while a scheduling
// cycle is in progress starts one more cycle as soon as that cycle ends,
// instead of waiting for the timed cycle (scheduler_iteration); two
// triggers during one cycle still make one cycle, and no cycle starts
// while another is served (issue 14 item 6, a deliberate difference:
// TORQUE drops the trigger).
func TestSchedulerTriggerDuringCycle(t *testing.T) {
	sched := newFakeSched(t)
	s := runServer(t, newFakeMom(t), sched.ln.Addr().(*net.TCPAddr).Port)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("scheduler_iteration", "600"), attr("scheduling", "true"))); p.Code != 0 {
		t.Fatalf("scheduling: %d", p.Code)
	}
	cy := sched.next(t)
	if cy.cmd != batchreq.SCH_SCHEDULE_CMD {
		t.Fatalf("first command %d", cy.cmd)
	}
	// While the scheduler holds its connection, two jobs arrive.
	submit(t, c, "during1")
	submit(t, c, "during2")
	sched.expectNone(t, 300*time.Millisecond) // never two cycles at once
	cy.c.nc.Close()
	cy = sched.next(t)
	if cy.cmd != batchreq.SCH_SCHEDULE_NEW {
		t.Fatalf("after the cycle: command %d, want SCH_SCHEDULE_NEW (%d)", cy.cmd, batchreq.SCH_SCHEDULE_NEW)
	}
	cy.c.nc.Close()
	waitSchedIdle(t, s)
	sched.expectNone(t, 1500*time.Millisecond) // one more cycle, not one per trigger
}

// TestSchedulerReleaseDuringCycle: a job released from its hold while a
// cycle is in progress starts one more cycle when it ends.
func TestSchedulerReleaseDuringCycle(t *testing.T) {
	sched := newFakeSched(t)
	s := runServer(t, newFakeMom(t), sched.ln.Addr().(*net.TCPAddr).Port)
	c := privConn(t, s)
	setupCluster(t, c)
	momsReported(s)
	held := submit(t, c, "held", attr("Hold_Types", "u"))
	if p := c.do(mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("scheduler_iteration", "600"), attr("scheduling", "true"))); p.Code != 0 {
		t.Fatalf("scheduling: %d", p.Code)
	}
	cy := sched.next(t)
	rls := batchreq.NewRequest(batchreq.PBS_BATCH_ReleaseJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: held,
		Attrs: batchreq.AttrList{attr("Hold_Types", "u")}})
	if p := c.do(rls); p.Code != 0 {
		t.Fatalf("qrls: %d", p.Code)
	}
	// the one-second tick notices the release during the cycle
	sched.expectNone(t, 1500*time.Millisecond)
	cy.c.nc.Close()
	if cy = sched.next(t); cy.cmd != batchreq.SCH_SCHEDULE_NEW {
		t.Fatalf("after the cycle: command %d, want SCH_SCHEDULE_NEW", cy.cmd)
	}
	cy.c.nc.Close()
}
