package server

import (
	"testing"

	"gopbs/batchreq"
)

// TestDefaultLimitsOrder: an unset limit comes from the first of the
// queue's resources_default, the server's resources_default, the queue's
// resources_max and the server's resources_max (seed 001, Resource
// Limits); a maximum of what is no limit (nodes) is no default.
func TestDefaultLimitsOrder(t *testing.T) {
	mom := newFakeMom(t)
	s := runServer(t, mom, 0)
	c := privConn(t, s)
	setupCluster(t, c)
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", rattr("resources_default", "cput", "00:30:00")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", rattr("resources_default", "pmem", "1gb")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", rattr("resources_max", "mem", "2gb")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", rattr("resources_max", "cput", "01:00:00")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "short", rattr("resources_max", "nodect", "4")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", rattr("resources_max", "vmem", "8gb")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", rattr("resources_max", "mem", "4gb")),
	} {
		if p := c.do(r); p.Code != 0 {
			t.Fatalf("qmgr: %d %s", p.Code, p.Text)
		}
	}
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Destination: "short",
		Attrs: batchreq.AttrList{attr("Job_Name", "defaults"), attr("Checkpoint", "u")}}))
	if p.Code != 0 {
		t.Fatalf("QueueJob: %d %s", p.Code, p.Text)
	}
	id := p.JobID
	for _, r := range []*batchreq.Request{
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: id, Data: []byte("#!/bin/sh\n")}),
		batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, "root", &batchreq.JobID{ID: id}),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: id}),
	} {
		if p := c.do(r); p.Code != 0 {
			t.Fatalf("%s: %d %s", batchreq.RequestName(r.Type), p.Code, p.Text)
		}
	}
	for res, want := range map[string]string{
		"walltime": "00:05:00", // queue resources_default
		"cput":     "00:30:00", // server resources_default before queue resources_max
		"pmem":     "1gb",      // server resources_default
		"mem":      "2gb",      // queue resources_max before server resources_max
		"vmem":     "8gb",      // server resources_max
		"nodect":   "",         // not a limit
	} {
		if got := jobAttr(t, c, id, "Resource_List."+res); got != want {
			t.Errorf("Resource_List.%s = %q, want %q", res, got, want)
		}
	}
}
