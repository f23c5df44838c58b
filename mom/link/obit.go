package link

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/logline"
	"gopbs/mom/jobexec"
	"gopbs/mom/momlog"
)

// JobExited is the Executor's OnExit callback: it records the end and
// starts the obituary (spec 10 §8.1).
func (m *Mom) JobExited(ex jobexec.Exit) {
	m.mu.Lock()
	j, ok := m.jobs[ex.JobID]
	if ok {
		j.exit = &ex
		j.stage = stageExiting
		j.obitDue = true
		if j.sid == 0 {
			j.sid = ex.SessionID
		}
	}
	m.mu.Unlock()
	if !ok {
		return
	}
	m.resaveJob(j, "job_exit") // a restarted MOM reports the end it missed
	m.goFunc(func() {
		// A multi-node job's sisters are told IM_KILL_JOB; their usage
		// counts in the obit (spec 11 §9.2).
		if used := m.endSisters(m.ctx, ex.JobID); used != (jobexec.Usage{}) {
			m.mu.Lock()
			j.exit.Usage.CPUTime += used.CPUTime
			j.exit.Usage.Mem += used.Mem
			j.exit.Usage.VMem += used.VMem
			m.mu.Unlock()
		}
		if m.conf().NodeCheckOnJobEnd {
			m.runHealthCheck(m.ctx)
		}
		m.sendObit(m.ctx, j)
	})
}

// obitLoop retries obituaries that could not be delivered.
func (m *Mom) obitLoop(ctx context.Context) {
	t := time.NewTicker(m.opt.ObitRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.mu.Lock()
		var due []*job
		for _, j := range m.jobs {
			if j.obitDue && j.stage == stageExiting {
				due = append(due, j)
			}
		}
		m.mu.Unlock()
		for _, j := range due {
			m.sendObit(ctx, j)
		}
	}
}

// errRetry marks an obituary step that must be retried later.
var errRetry = errors.New("retry later")

// sendObit runs the pre-obit status check, the epilogue and the JobObit.
// Concurrent calls for one job are serialised by the obitDue flag.
func (m *Mom) sendObit(ctx context.Context, j *job) {
	m.mu.Lock()
	if !j.obitDue || j.stage != stageExiting {
		m.mu.Unlock()
		return
	}
	j.obitDue = false // taken; set again on failure
	preobitOK := j.preobitOK
	m.mu.Unlock()

	// A failure is logged where TORQUE logs it: in scan_for_exiting for
	// the pre-obit, in post_epilogue for the obit.
	function := "scan_for_exiting"
	err := func() error {
		if !preobitOK {
			keep, err := m.preobit(ctx, j)
			if err != nil {
				return err
			}
			if !keep {
				m.purge(j)
				return nil
			}
			if _, err := m.exec.Epilogue(ctx, j.id); err != nil && !errors.Is(err, jobexec.ErrUnknownJob) {
				m.logErr("epilogue", err, j.id)
			}
			m.mu.Lock()
			j.preobitOK = true
			m.mu.Unlock()
		}
		function = "post_epilogue"
		return m.jobObit(ctx, j)
	}()
	if err != nil {
		if errnoOf(err) != 0 {
			// "LOG_ERROR::Cannot assign requested address (99) in
			// scan_for_exiting, " (captured mom_logs).
			m.logErr(function, err, "")
		} else {
			m.logErr(function, err, j.id)
		}
		m.mu.Lock()
		j.obitDue = true
		m.mu.Unlock()
	}
}

// serverCall sends one request to the job's server on a connection of
// its own; a failure is an errRetry. When the job's server cannot be
// connected to, the other servers of $pbsserver are tried in turn (the
// standby of a failover pair that has taken over, docs/failover.md), and
// the one that answers is the job's server from then on.
func (m *Mom) serverCall(ctx context.Context, j *job, req *batchreq.Request) (*batchreq.Reply, error) {
	m.mu.Lock()
	addr := netip.AddrPortFrom(j.server, uint16(j.serverPort))
	m.mu.Unlock()
	var rep *batchreq.Reply
	talk := func(sc *serverConn) (err error) {
		rep, err = sc.call(req)
		return err
	}
	err := m.withServer(ctx, addr, talk)
	var ce *connectError
	if errors.As(err, &ce) {
		for _, alt := range m.otherServers(ctx, addr) {
			if aerr := m.withServer(ctx, alt, talk); !errors.As(aerr, &ce) {
				err = aerr
				if aerr == nil {
					m.mu.Lock()
					j.server, j.serverPort = alt.Addr(), int(alt.Port())
					m.mu.Unlock()
					m.log.Job(logline.EventJob, j.id, fmt.Sprintf("server %v unreachable, %v answered", addr, alt))
				}
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errRetry, err)
	}
	return rep, nil
}

// otherServers returns the addresses of the $pbsserver entries other
// than addr, in their order; entries that do not resolve are left out.
func (m *Mom) otherServers(ctx context.Context, addr netip.AddrPort) []netip.AddrPort {
	var out []netip.AddrPort
	for _, s := range m.opt.Servers {
		host, port := splitHostPort(s, m.opt.ServerPort)
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ip, err := m.resolve(rctx, host)
		cancel()
		if err != nil {
			continue
		}
		a := netip.AddrPortFrom(ip.Unmap(), uint16(port))
		if a != addr && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// connectError is withServer's failure to connect: nothing was sent.
type connectError struct {
	addr netip.AddrPort
	err  error
}

func (e *connectError) Error() string { return fmt.Sprintf("connect %v: %v", e.addr, e.err) }
func (e *connectError) Unwrap() error { return e.err }

// serverConn is a connection to a server for the MOM's own requests.
type serverConn struct {
	w *dis.Writer
	r *dis.Reader
}

// call sends req and reads the reply.
func (sc *serverConn) call(req *batchreq.Request) (*batchreq.Reply, error) {
	req.Encode(sc.w)
	if err := sc.w.Flush(); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	rep, err := batchreq.ReadReply(sc.r)
	if err != nil {
		return nil, fmt.Errorf("read reply: %w", err)
	}
	return rep, nil
}

// withServer connects to the server at addr from a privileged port and
// runs talk on the connection, all within $timeout. The MOM closes the
// connection without a Disconnect, as TORQUE's does.
func (m *Mom) withServer(ctx context.Context, addr netip.AddrPort, talk func(*serverConn) error) error {
	ctx, cancel := context.WithTimeout(ctx, m.tcpTimeout())
	defer cancel()
	c, err := m.opt.Dial(ctx, addr)
	if err != nil {
		return &connectError{addr: addr, err: err}
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	return talk(&serverConn{w: dis.NewWriter(c), r: dis.NewReader(c)})
}

// preobit asks the server whether the job is still its own here. It
// reports false when the job must be deleted without an obit.
func (m *Mom) preobit(ctx context.Context, j *job) (bool, error) {
	req := batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, "pbs_mom", &batchreq.StatusReq{ID: j.id})
	rep, err := m.serverCall(ctx, j, req)
	if err != nil {
		return false, err
	}
	m.log.Record(logline.EventDebug, momlog.ClassServer, "preobit_reply", "top of preobit_reply")
	switch {
	case rep.Code == batchreq.PBSE_UNKJOBID || rep.Code == batchreq.PBSE_CLEANEDOUT:
		return false, nil
	case rep.Code != 0 || rep.Choice != batchreq.BATCH_REPLY_CHOICE_Status:
		return false, fmt.Errorf("%w: pre-obit status reply code %d", errRetry, rep.Code)
	}
	m.log.Record(logline.EventDebug, momlog.ClassServer, "preobit_reply", "DIS_reply_read/decode_DIS_replySvr worked, top of while loop")
	for _, o := range rep.Status {
		if o.Name != j.id {
			continue
		}
		m.log.Record(logline.EventDebug, momlog.ClassServer, "preobit_reply", "in while loop, no error from job stat")
		if eh, ok := o.Attrs.Get("exec_host"); ok && !jobexec.IsLocalHost(firstExecHost(eh), m.opt.Host) {
			return false, nil // rerun elsewhere
		}
	}
	return true, nil
}

// jobObit sends the JobObit request and handles the reply (spec 10 §8.3).
func (m *Mom) jobObit(ctx context.Context, j *job) error {
	m.mu.Lock()
	ex := *j.exit
	status := ex.Status
	if j.rerun {
		status = 0
	}
	attrs := usageAttrs(ex.Usage)
	if !j.sidSent && j.sid > 0 {
		attrs = append(attrs, batchreq.NewAttr("session_id", fmt.Sprint(j.sid)))
	}
	attrs = append(attrs, checkpointAttrs(ex.CheckpointName, ex.CheckpointTime)...)
	if status == jobexec.JOB_EXEC_OVERLIMIT && ex.Message != "" {
		// GoPBS: the job's comment names the limit it passed, as its
		// stderr file does (README, deliberate differences).
		attrs = append(attrs, batchreq.NewAttr("comment", LimitComment(ex.Message)))
	}
	m.mu.Unlock()
	req := batchreq.NewRequest(batchreq.PBS_BATCH_JobObit, "pbs_mom",
		&batchreq.JobObit{JobID: j.id, ExitStatus: status, Attrs: attrs})
	rep, err := m.serverCall(ctx, j, req)
	if err != nil {
		return err
	}
	switch rep.Code {
	case 0, batchreq.PBSE_ALRDYEXIT:
		m.mu.Lock()
		j.stage = stageExited
		j.sidSent = true
		m.mu.Unlock()
		m.log.Job(logline.EventDebug, j.id, "obit sent to server")
	default:
		m.log.Job(logline.EventJob, j.id, fmt.Sprintf("obit reply code %d, deleting job", rep.Code))
		m.purge(j)
	}
	return nil
}

// LimitComment is the comment a job killed over a limit gets from its
// obit: "job killed: " and the MOM's message ("mem 73728000 exceeded limit
// 52428800"), the words of the job's stderr file.
func LimitComment(msg string) string { return "job killed: " + msg }
