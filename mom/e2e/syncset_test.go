package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e/batchconn"
)

// syncPrices sets a cluster's resource costs (resources_cost.mem=1 per
// MB, system_cost=5) and gives its node room for three jobs.
func (cl *cluster) syncPrices() {
	cl.c.Must(batchconn.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewResourceAttr("resources_cost", "mem", "1")))
	cl.c.Must(batchconn.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("system_cost", "5")))
	cl.c.Must(batchconn.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_NODE, "localhost", batchreq.NewAttr("np", "4")))
}

// states returns the job_state letters of ids ("-" for a job not there).
func (cl *cluster) states(ids ...string) string {
	var b strings.Builder
	for _, id := range ids {
		st := cl.job(id, "job_state")
		if st == "" {
			st = "-"
		}
		b.WriteString(st)
	}
	return b.String()
}

func memAttr(v string) batchreq.Attr { return batchreq.NewResourceAttr("Resource_List", "mem", v) }

const syncScript = "#!/bin/sh\nsleep 120\n"

// TestSyncSetCheapestFirst: with real daemons, a sync set of three
// (-W synccount=2 and two -W syncwith) waits until all registered, then
// its jobs are released one at a time, cheapest first by the server's
// resources_cost and system_cost, each next one when the previous runs
// (seed 001, Synchronize Job Starts).
func TestSyncSetCheapestFirst(t *testing.T) {
	cl := newCluster(t, "")
	cl.syncPrices()
	master := cl.submit("master", syncScript, batchreq.NewAttr("synccount", "2"), memAttr("300mb"))
	small := cl.submit("small", syncScript, batchreq.NewAttr("syncwith", master), memAttr("100mb"))
	if got := cl.states(master, small); got != "HH" {
		t.Fatalf("incomplete set: %s", got)
	}
	middle := cl.submit("middle", syncScript, batchreq.NewAttr("syncwith", master), memAttr("200mb"))
	if got := cl.states(master, small, middle); got != "HQH" {
		t.Fatalf("complete set: %s, want only the cheapest (small) released", got)
	}
	cl.run(small)
	cl.waitState(small, "R", 60*time.Second)
	cl.waitState(middle, "Q", 10*time.Second)
	if got := cl.job(master, "job_state"); got != "H" {
		t.Fatalf("master %s while middle is not running", got)
	}
	cl.run(middle)
	cl.waitState(middle, "R", 60*time.Second)
	cl.waitState(master, "Q", 10*time.Second)
	cl.run(master)
	cl.waitState(master, "R", 60*time.Second)
	log := cl.serverLog()
	for _, id := range []string{small, middle, master} {
		if !strings.Contains(log, ";Job;"+id+";sync set of "+master+": released") {
			t.Errorf("server log lacks the release of %s", id)
		}
	}
	if i, j := strings.Index(log, small+";sync set of"), strings.Index(log, middle+";sync set of"); i < 0 || j < i {
		t.Errorf("small was not released before middle")
	}
}

// TestSyncSetAcrossServers: a sync set whose master is on one server and
// one member on another: the member registers with the master's server
// with its cost (RegisterDependency), is released first as the cheapest,
// and its start (Ready) releases the next member on the master's server.
func TestSyncSetAcrossServers(t *testing.T) {
	a := newCluster(t, "")
	b := newCluster(t, "")
	a.syncPrices()
	b.syncPrices()
	master := a.submit("master", syncScript, batchreq.NewAttr("synccount", "2"), memAttr("300mb"))
	local := a.submit("local", syncScript, batchreq.NewAttr("syncwith", master), memAttr("200mb"))
	remoteMaster := master + "@localhost:" + strconv.Itoa(a.svPort)
	remote := b.submit("remote", syncScript, batchreq.NewAttr("syncwith", remoteMaster), memAttr("100mb"))
	// the remote member's registration completes the set: it is the
	// cheapest, and its server releases it at the master's request
	b.waitState(remote, "Q", 30*time.Second)
	if got := a.states(master, local); got != "HH" {
		t.Fatalf("master's server after the remote registration: %s", got)
	}
	if d := a.job(master, "depend"); !strings.Contains(d, remote+"@localhost\\:"+strconv.Itoa(b.svPort)) {
		t.Fatalf("master depend %q does not list the remote member", d)
	}
	b.run(remote)
	b.waitState(remote, "R", 60*time.Second)
	a.waitState(local, "Q", 30*time.Second)
	if got := a.job(master, "job_state"); got != "H" {
		t.Fatalf("master %s before local runs", got)
	}
	a.run(local)
	a.waitState(local, "R", 60*time.Second)
	a.waitState(master, "Q", 10*time.Second)
	// deleting the master now would abort nothing: every member runs
	a.run(master)
	a.waitState(master, "R", 60*time.Second)
}

// TestSyncSetRemoteMemberAborted: deleting a master whose remote member
// has not started deletes that member on its own server.
func TestSyncSetRemoteMemberAborted(t *testing.T) {
	a := newCluster(t, "")
	b := newCluster(t, "")
	master := a.submit("master", syncScript, batchreq.NewAttr("synccount", "1"))
	remote := b.submit("remote", syncScript, batchreq.NewAttr("syncwith", master+"@localhost:"+strconv.Itoa(a.svPort)))
	// equal costs: the complete set releases its master first
	a.waitState(master, "Q", 30*time.Second)
	if got := b.job(remote, "job_state"); got != "H" {
		t.Fatalf("remote member %s before the master runs", got)
	}
	a.c.Must(batchreq.NewRequest(batchreq.PBS_BATCH_DeleteJob, "root", &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: master}))
	b.waitState(remote, "C", 30*time.Second)
	if !strings.Contains(b.serverLog(), ";Job;"+remote+";Job deleted as result of dependency on job "+master) {
		t.Error("the remote member's server does not log why it was deleted")
	}
}
