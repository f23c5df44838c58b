package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"gopbs/internal/logline"
	"gopbs/jobfile"
	"gopbs/mom/jobexec"
	"gopbs/mom/momd"
	"gopbs/momproto"
	"gopbs/rpp"
)

// Multi-node jobs across a MOM restart. A sister writes the jobs it
// joined to mom_priv/jobs like any other job (spec 13 §6: the MOM union
// with the mother superior's address, no HERE flag, and after the
// attributes the trailing TM information with the mother superior's
// output ports and the node id), and the engine writes their tasks to the
// .TK task file (§7). A MOM restarted with -p takes both back: a sister
// answers the mother superior's IM requests for the job again, a mother
// superior re-opens its streams to the sisters and goes on polling them,
// and kills them at the job's end. Restarted otherwise, a mother superior
// still reaches its sisters to end the job there (IM_KILL_JOB with the
// obit); a sister drops the job and, but for -q, kills its tasks.

// addSister registers a sister job, arrived with IM_JOIN_JOB or
// recovered.
func (m *Mom) addSister(sj *sisterJob) {
	m.mu.Lock()
	m.nextOrder++
	sj.order = m.nextOrder
	m.mu.Unlock()
	m.mn.mu.Lock()
	defer m.mn.mu.Unlock()
	if m.mn.sisters == nil {
		m.mn.sisters = map[string]*sisterJob{}
		m.mn.streams = map[*rpp.Stream]string{}
	}
	m.mn.sisters[sj.id] = sj
	if sj.stream != nil {
		m.mn.streams[sj.stream] = sj.id
	}
}

// adoptSisterStream makes s the stream of a sister job when the mother
// superior speaks on a new one (it restarted, or this MOM did): the end of
// that stream is the end of the job's link to its mother superior.
func (m *Mom) adoptSisterStream(sj *sisterJob, s *rpp.Stream) {
	m.mn.mu.Lock()
	defer m.mn.mu.Unlock()
	if sj.stream == s || m.mn.sisters[sj.id] != sj {
		return
	}
	if sj.stream != nil && m.mn.streams[sj.stream] == sj.id {
		delete(m.mn.streams, sj.stream)
	}
	sj.stream = s
	m.mn.streams[s] = sj.id
}

// saveSisterJob writes the job file of a sister job.
func (m *Mom) saveSisterJob(sj *sisterJob) error {
	f := &jobfile.Job{Version: jobfile.QSVersion, ID: sj.id, Prefix: sj.prefix, Queue: sj.spec.Queue, Stime: sj.stime,
		State: jobStateRunning, Substate: substateRunning}
	mom := jobfile.Mom{ServerAddr: sj.msAddr}
	if cred, err := jobexec.LookupUser(sj.spec.User, sj.spec.Group); err == nil {
		mom.UID, mom.GID = cred.UID, cred.GID
	}
	f.SetMom(mom)
	for _, a := range sj.attrs {
		if a.Name == "cookie" || a.Name == "session_id" {
			continue
		}
		f.Attrs = append(f.Attrs, saveAttr(a))
	}
	f.Attrs = append(f.Attrs, jobfile.Attr{Name: "cookie", Value: sj.cookie, Flags: jobfile.FlagSet})
	sortRecords(f.Attrs)
	f.SetTM(jobfile.TM{Stdout: int32(sj.stdoutPort), Stderr: int32(sj.stderrPort), NodeID: int32(sj.nodeID)})
	b, err := f.Marshal()
	if err != nil {
		return fmt.Errorf("save job %s: %w", sj.id, err)
	}
	return writeJobFile(m.jobFilePath(sj.prefix), b)
}

// taskFilePath returns mom_priv/jobs/<prefix>.TK.
func (m *Mom) taskFilePath(prefix string) string {
	return filepath.Join(m.opt.Home, "mom_priv", "jobs", prefix+".TK")
}

// removeJobFiles removes a job's job and task files.
func (m *Mom) removeJobFiles(prefix string) {
	os.Remove(m.jobFilePath(prefix))
	os.Remove(m.taskFilePath(prefix))
}

// msTM returns the trailing TM information of the job file of a job this
// MOM is mother superior of on several hosts: its output ports, the next
// task id; ok is false for other jobs.
func (m *Mom) msTM(id string) (tm jobfile.TM, ok bool) {
	m.mn.mu.Lock()
	mj := m.mn.ms[id]
	m.mn.mu.Unlock()
	if mj == nil {
		return tm, false
	}
	mj.mu.Lock()
	defer mj.mu.Unlock()
	if mj.demux == nil {
		return tm, false
	}
	return jobfile.TM{Stdout: int32(mj.demux.stdoutPort), Stderr: int32(mj.demux.stderrPort), NextTaskID: int32(mj.nextTask)}, true
}

// recoverSister takes back a sister job found in mom_priv/jobs.
func (m *Mom) recoverSister(j *job, mode momd.RestartMode) {
	tr := m.tasks()
	if mode == momd.RecoverPoll && tr != nil && j.hasTM {
		spec := j.spec
		err := tr.Join(&spec, int(j.tm.NodeID))
		if err == nil {
			if _, err := tr.AdoptTasks(j.id); err != nil {
				m.logErr("job_recov", err, "tasks of "+j.id)
			}
			sj := &sisterJob{id: j.id, cookie: spec.Cookie, spec: spec, nodeID: int(j.tm.NodeID),
				msHost: firstExecHost(spec.ExecHost), msAddr: j.server,
				stdoutPort: int(j.tm.Stdout), stderrPort: int(j.tm.Stderr),
				attrs: j.attrs, prefix: j.prefix, stime: j.stime}
			m.addSister(sj)
			m.watchOrphan(tr, sj) // until the mother superior speaks again
			return
		}
		m.logErr("job_recov", err, "cannot re-attach "+j.id)
	}
	if mode != momd.RecoverRequeue {
		recs, _ := jobexec.ReadTaskFile(m.taskFilePath(j.prefix))
		for _, r := range recs {
			if r.Status == jobexec.TaskRunning && r.SessionID > 1 {
				syscall.Kill(-r.SessionID, syscall.SIGKILL)
			}
		}
	}
	m.removeJobFiles(j.prefix)
}

// recoverMS re-establishes the mother-superior side of a recovered job
// that runs on several hosts: streams to its sisters, and with poll (the
// job goes on running) its tasks, output ports and the usage polls.
func (m *Mom) recoverMS(j *job, poll bool) {
	mj := m.msJobFor(j)
	if len(mj.hosts) < 2 {
		return
	}
	mj.mu.Lock()
	mj.linked = make(chan struct{})
	mj.mu.Unlock()
	if poll {
		if tr := m.tasks(); tr != nil {
			highest, err := tr.AdoptTasks(j.id)
			if err != nil {
				m.logErr("job_recov", err, "tasks of "+j.id)
			}
			mj.mu.Lock()
			mj.nextTask = max(mj.nextTask, highest+1, int(j.tm.NextTaskID))
			mj.mu.Unlock()
		}
	}
	m.goFunc(func() { m.relinkSisters(mj, j.tm, poll) })
}

// relinkSisters opens new streams to the sisters of a recovered job once
// the MOM's RPP endpoint is up.
func (m *Mom) relinkSisters(mj *msJob, tm jobfile.TM, poll bool) {
	defer close(mj.linked)
	select {
	case <-m.mn.ready:
	case <-m.ctx.Done():
		return
	}
	if poll {
		if tr := m.tasks(); tr != nil {
			d, err := m.startDemuxOn(mj.id, tr, int(tm.Stdout), int(tm.Stderr))
			if err != nil {
				m.logErr("job_recov", err, "output demultiplexer of "+mj.id)
			} else {
				mj.mu.Lock()
				mj.demux = d
				mj.mu.Unlock()
			}
		}
	}
	ctx, cancel := context.WithTimeout(m.ctx, m.tcpTimeout())
	defer cancel()
	for node := 1; node < len(mj.hosts); node++ {
		mj.relink.Lock()
		sl, err := m.openSister(ctx, mj, node)
		if err != nil {
			mj.relink.Unlock()
			m.log.Job(logline.EventJob, mj.id, err.Error())
			continue
		}
		mj.mu.Lock()
		mj.sisters = append(mj.sisters, sl)
		mj.mu.Unlock()
		mj.relink.Unlock()
		if !poll {
			continue
		}
		// The tasks running there, for signals to reach them.
		rep, err := m.imCall(ctx, mj, sl, momproto.IM_GET_TASKS, m.newEvent(), 0, &momproto.Ints{Values: []int{0}})
		if err != nil || rep.Command != momproto.IM_ALL_OKAY {
			m.log.Job(logline.EventJob, mj.id, fmt.Sprintf("tasks on %s not known after restart: %v", sl.host, err))
			continue
		}
		if b, ok := rep.Body.(*momproto.Ints); ok {
			for _, id := range b.Values {
				mj.addRemote(node, id)
			}
		}
	}
	mj.mu.Lock()
	ended := mj.ended
	mj.mu.Unlock()
	switch {
	case ended:
		// Purged meanwhile (-P): the sisters drop the job too.
		m.abortSisters(mj)
	case poll:
		m.goFunc(func() { m.pollSisters(mj) })
	}
}

// openSister opens the IM stream to the sister of node.
func (m *Mom) openSister(ctx context.Context, mj *msJob, node int) (*sisterLink, error) {
	host := mj.hosts[node]
	addr, err := m.resolve(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("sister %s: %w", host, err)
	}
	st, err := m.mn.ep.Open(netip.AddrPortFrom(addr, uint16(m.opt.RMPort)))
	if err != nil {
		return nil, fmt.Errorf("sister %s: open stream: %w", host, err)
	}
	sl := &sisterLink{node: node, host: host, stream: st, pending: map[callKey][]*imCall{}}
	m.goFunc(func() { m.readSister(mj, sl) })
	return sl, nil
}

// startDemuxOn starts the output demultiplexer on the given ports if it
// can (those the sisters were told at the join), else on new ones.
func (m *Mom) startDemuxOn(jobID string, tr TaskRunner, stdoutPort, stderrPort int) (*demux, error) {
	if stdoutPort > 0 && stderrPort > 0 {
		out, err1 := net.Listen("tcp", ":"+strconv.Itoa(stdoutPort))
		errl, err2 := net.Listen("tcp", ":"+strconv.Itoa(stderrPort))
		if err1 == nil && err2 == nil {
			return m.serveDemux(jobID, tr, out, errl), nil
		}
		for _, l := range []net.Listener{out, errl} {
			if l != nil {
				l.Close()
			}
		}
		m.log.Job(logline.EventJob, jobID, fmt.Sprintf("output ports %d/%d taken: %v", stdoutPort, stderrPort, errors.Join(err1, err2)))
	}
	return m.startDemux(jobID, tr)
}

// listedJob is a job as the jobs= status item and momctl -d list it.
type listedJob struct {
	order uint64
	id    string
	state string
	sid   int
}

// listedJobs returns the jobs MOM holds, those it joined as a sister
// included (TORQUE keeps them in its one job list), in arrival order.
func (m *Mom) listedJobs() []listedJob {
	m.mu.Lock()
	var out []listedJob
	for _, j := range m.jobs {
		out = append(out, listedJob{j.order, j.id, stageName(j.stage), j.sid})
	}
	m.mu.Unlock()
	m.mn.mu.Lock()
	for _, sj := range m.mn.sisters {
		out = append(out, listedJob{sj.order, sj.id, stageName(stageRunning), 0})
	}
	m.mn.mu.Unlock()
	slices.SortFunc(out, func(a, b listedJob) int {
		switch {
		case a.order < b.order:
			return -1
		case a.order > b.order:
			return 1
		}
		return 0
	})
	return out
}
