package compattests

// This file holds the server replay's driver: the replayer, which runs an
// in-process GoPBS server, opens root, user and reserved-port (MOM)
// connections to it, and replays one scenario's captured client
// connections, comparing every reply (replay).

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
	"gopbs/internal/e2e/batchconn"
	"gopbs/server"
)

// replayer drives one in-process server.
type replayer struct {
	t    *testing.T
	s    *server.Server
	mom  *replayMom
	root *replayConn
}

type replayConn struct {
	nc net.Conn
	r  *dis.Reader
}

func newReplayer(t *testing.T) *replayer {
	return newReplayerWith(t, func(*server.Config) {})
}

// newReplayerWith is newReplayer with the server's configuration changed
// by configure before the server starts.
func newReplayerWith(t *testing.T, configure func(*server.Config)) *replayer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mom := newReplayMom(t)
	cfg := server.Config{Home: t.TempDir(), ServerName: captureHost, InitType: server.InitCreate, Listener: ln,
		MomPort: mom.momPort(), RMPort: int(mom.udp.Port()), ResolveHost: mom.resolve}
	configure(&cfg)
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown("Quick") })
	r := &replayer{t: t, s: s, mom: mom}
	r.root = r.dialReserved()
	return r
}

// momUp has node vm's MOM report status and waits for the node to be
// free.
func (r *replayer) momUp(t *testing.T, status []string) {
	r.mom.report(t, r.s.Addr().(*net.TCPAddr).Port, status)
	deadline := time.Now().Add(10 * time.Second)
	for {
		p := r.admin(batchreq.NewRequest(batchreq.PBS_BATCH_StatusNode, "root", &batchreq.StatusReq{ID: captureHost}))
		if p.Code == 0 && len(p.Status) == 1 {
			for _, a := range p.Status[0].Attrs {
				if a.Name == "state" && a.Value == "free" {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s not free after its MOM reported: %+v", captureHost, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *replayer) dialReserved() *replayConn {
	c := batchconn.DialReserved(r.t, r.s.Addr().String(), 10*time.Second)
	return &replayConn{nc: c.NetConn(), r: c.Reader()}
}

func (c *replayConn) do(b []byte) (*batchreq.Reply, error) {
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		return nil, err
	}
	return batchreq.ReadReply(c.r)
}

// mustAdmin sends reqs as root, one after the other, and fails the test,
// naming what they are for, at the first that does not succeed.
func (r *replayer) mustAdmin(t *testing.T, what string, reqs ...*batchreq.Request) {
	t.Helper()
	for _, req := range reqs {
		if p := r.admin(req); p.Code != 0 {
			t.Fatalf("%s: %d %s", what, p.Code, p.Text)
		}
	}
}

// startRound starts a replayer for a round of captures: root sends the
// round's setup requests, then, if mom is set, node vm's MOM reports the
// status of the capture cluster (see momStatusAt).
func startRound(t *testing.T, dir string, setup []*batchreq.Request, mom bool) *replayer {
	t.Helper()
	r := newReplayer(t)
	r.mustAdmin(t, "setup", setup...)
	if mom {
		r.momUp(t, momStatusAt(t, dir))
	}
	return r
}

func (r *replayer) admin(req *batchreq.Request) *batchreq.Reply {
	p, err := r.root.do(req.Append(nil))
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// run starts a job on node vm's MOM as qrun does and waits until it runs.
func (r *replayer) run(t *testing.T, id string) {
	r.mustAdmin(t, "run "+id, batchreq.NewRequest(batchreq.PBS_BATCH_RunJob, "root", &batchreq.RunJob{JobID: id}))
}

// userConn opens a client connection authenticated as user.
func (r *replayer) userConn(t *testing.T, user string) *replayConn {
	nc, err := net.Dial("tcp", r.s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	iffc := r.dialReserved()
	defer iffc.nc.Close()
	port := nc.LocalAddr().(*net.TCPAddr).Port
	p, err := iffc.do(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, &batchreq.AuthenUser{Port: port}).Append(nil))
	if err != nil || p.Code != 0 {
		t.Fatalf("authenticate %s: %v %+v", user, err, p)
	}
	return &replayConn{nc: nc, r: dis.NewReader(nc)}
}

// replay replays one capture and returns the differences.
func (r *replayer) replay(t *testing.T, path string, sc capture.Scenario, st replayStep) string {
	c, err := capture.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := time.ParseInLocation("2006-01-02T15:04:05", sc.StartTime, time.Local)
	shift := time.Now().Unix() - start.Unix()
	nextSeq := -1 // the job number the next submission takes
	if st.setNextJob {
		if n := firstJobNumber(c); n >= 0 {
			r.admin(setServer("next_job_number", strconv.Itoa(n)))
			nextSeq = n
		}
	}
	if st.syncJobs && nextSeq < 0 {
		t.Fatal("sync-job scenarios need setNextJob")
	}
	var syncIDs []string // sync-set jobs accepted in place of the capture's rejection
	var correct *correction
	if st.stateCount {
		correct = stepStateCount(t, path, c, st)
	}
	var diffs []string
	var last time.Time
	for _, conn := range c.Conns {
		if st.compress && !last.IsZero() && conn.Start.Sub(last) > time.Second {
			time.Sleep(1500 * time.Millisecond)
		}
		last = conn.Start
		if conn.Server.Port() != batchreq.PBS_BATCH_SERVICE_PORT {
			if st.ownTraffic && conn.Client.Port() < 1024 {
				continue
			}
			if st.pending == "" {
				return fmt.Sprintf("connection to port %d cannot be replayed", conn.Server.Port())
			}
			continue
		}
		turns := conn.Turns()
		fromMom := st.momReports && isMomReport(conn, turns)
		if conn.Client.Port() < 1024 && !fromMom {
			continue // pbs_iff: replaced by our own authentication
		}
		var rc *replayConn
		for i, turn := range turns {
			if !turn.FromClient {
				continue
			}
			reqs := splitRequests(turn.Data)
			if len(reqs) == 0 {
				continue
			}
			if rc == nil && fromMom {
				// node vm's MOM reporting a job (status, obituary):
				// a daemon, trusted by its reserved port
				rc = r.dialReserved()
				defer rc.nc.Close()
			}
			if rc == nil {
				rc = r.userConn(t, reqs[0].User)
				defer rc.nc.Close()
			}
			var want []*batchreq.Reply
			if i+1 < len(turns) && !turns[i+1].FromClient {
				want = splitReplies(turns[i+1].Data)
			}
			data := shiftEpochs(turn.Data, shift)
			if _, err := rc.nc.Write(data); err != nil {
				diffs = append(diffs, fmt.Sprintf("write: %v", err))
				break
			}
			for k, w := range want {
				rc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
				got, err := batchreq.ReadReply(rc.r)
				if err != nil {
					diffs = append(diffs, fmt.Sprintf("request %s: no reply: %v", batchreq.RequestName(reqs[min(k, len(reqs)-1)].Type), err))
					break
				}
				if correct != nil {
					w = correct.apply(t, w)
				}
				var req *batchreq.Request
				if k < len(reqs) {
					req = reqs[k]
				}
				syncJob := false
				if req != nil && req.Type == batchreq.PBS_BATCH_QueueJob {
					switch {
					case nextSeq < 0:
					case w.Code == 0 && jobSeq(w.JobID) != strconv.Itoa(nextSeq):
						t.Fatalf("capture: job %s queued where number %d was next", w.JobID, nextSeq)
					case st.syncJobs && w.Code == batchreq.PBSE_NOATTR && syncAttr(req) != "":
						id := fmt.Sprintf("%d.%s", nextSeq, captureHost)
						results.depart(t, fmt.Sprintf("QueueJob with %s rejected with %d, accepted as %s", syncAttr(req), w.Code, id), syncReason)
						w = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, id)
						syncJob = true
					}
					if nextSeq >= 0 {
						nextSeq++
					}
				}
				if d := compareReplies(w, got); d != "" {
					diffs = append(diffs, fmt.Sprintf("%s reply differs: %s", batchreq.RequestName(reqs[min(k, len(reqs)-1)].Type), d))
				} else if syncJob {
					if d := r.completeSubmission(rc, req.User, got.JobID, capturedScript(t, path)); d != "" {
						diffs = append(diffs, d)
					}
					syncIDs = append(syncIDs, got.JobID)
				}
			}
		}
	}
	if st.syncJobs {
		diffs = append(diffs, r.checkSyncSets(c, syncIDs)...)
	}
	return strings.Join(diffs, "\n")
}

// momUser is the user name pbs_mom puts in its requests to the server.
const momUser = "pbs_mom"

// isMomReport reports whether a captured connection with these turns is
// one node vm's MOM opened to the server's batch port: from a reserved
// port, its requests naming the MOM's user.
func isMomReport(conn *capture.Conn, turns []capture.Chunk) bool {
	return conn.Server.Port() == batchreq.PBS_BATCH_SERVICE_PORT && conn.Client.Port() < 1024 && firstUser(turns) == momUser
}

// firstUser returns the user of a connection's first request.
func firstUser(turns []capture.Chunk) string {
	for _, turn := range turns {
		if turn.FromClient {
			if reqs := splitRequests(turn.Data); len(reqs) > 0 {
				return reqs[0].User
			}
		}
	}
	return ""
}
