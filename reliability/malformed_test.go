package reliability

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
	"gopbs/rpp"
	"gopbs/sched/momquery"
	"gopbs/tools/pbsbench/load"
)

// badLimits are -l values that must never hurt a server (TORQUE 2.x
// crashes on some malformed resource values).
var badLimits = []struct{ res, val string }{
	{"nodes", ""}, {"nodes", ":"}, {"nodes", "1:ppn="}, {"nodes", "1:ppn=-1"}, {"nodes", "+"},
	{"nodes", "99999999999999999999"}, {"nodes", "1:ppn=99999999999999999999:gpus=-5"},
	{"nodes", "a+b+c:d=e:f#excl"}, {"walltime", "::::"}, {"walltime", "-1"}, {"walltime", "99999999999:99:99"},
	{"walltime", "1:2:3:4:5:6"}, {"mem", "99999999999999999999gb"}, {"mem", "-5mb"}, {"mem", "kb"},
	{"mem", "1.5.5gb"}, {"ncpus", "x"}, {"ncpus", "-2147483649"}, {"procs", "0x10"}, {"pmem", "1pb"},
	{"cput", "1:-1:1"}, {"file", "1tbb"}, {"neednodes", "\x00\xff"}, {"nodes", string(make([]byte, 5000))},
}

// seedRequests are valid requests of every kind a client may send; the
// malformed ones are mutations of these.
func seedRequests(user string) [][]byte {
	var reqs []*batchreq.Request
	add := func(t int, b batchreq.Body) { reqs = append(reqs, batchreq.NewRequest(t, user, b)) }
	for _, l := range badLimits {
		add(batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{Attrs: batchreq.AttrList{
			batchreq.NewAttr("Job_Name", "fuzz"), batchreq.NewAttr("Hold_Types", "u"),
			batchreq.NewResourceAttr("Resource_List", l.res, l.val)}})
		add(batchreq.PBS_BATCH_ModifyJob, &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB,
			ObjName: "1.localhost", Attrs: batchreq.AttrList{batchreq.NewResourceAttr("Resource_List", l.res, l.val)}})
	}
	add(batchreq.PBS_BATCH_QueueJob, &batchreq.QueueJob{Destination: "batch@localhost", Attrs: batchreq.AttrList{
		batchreq.NewAttr("depend", "afterok:1.localhost:2.x"), batchreq.NewAttr("Execution_Time", "202611221200.99"),
		batchreq.NewAttr("Variable_List", "A=,=B,,C"), batchreq.NewAttr("job_array_request", "0-99999999%-1"),
		batchreq.NewAttr("Hold_Types", "u")}})
	add(batchreq.PBS_BATCH_jobscript, &batchreq.JobFile{JobID: "1.localhost", Data: []byte("#!/bin/sh\n")})
	add(batchreq.PBS_BATCH_RdytoCommit, &batchreq.JobID{ID: "1.localhost"})
	add(batchreq.PBS_BATCH_Commit, &batchreq.JobID{ID: ""})
	add(batchreq.PBS_BATCH_StatusJob, &batchreq.StatusReq{Attrs: batchreq.StatusNames("job_state", "Resource_List")})
	add(batchreq.PBS_BATCH_StatusSvr, &batchreq.StatusReq{})
	add(batchreq.PBS_BATCH_StatusQue, &batchreq.StatusReq{ID: "batch"})
	add(batchreq.PBS_BATCH_StatusNode, &batchreq.StatusReq{})
	add(batchreq.PBS_BATCH_SelectJobs, &batchreq.Select{Attrs: batchreq.AttrList{{Name: "job_state", Value: "Q", Op: batchreq.EQ},
		{Name: "Resource_List", Resource: "walltime", HasResource: true, Value: "::", Op: 5}}})
	add(batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: "999999999999999999999.localhost"})
	add(batchreq.PBS_BATCH_HoldJob, &batchreq.Manage{ObjType: batchreq.MGR_OBJ_JOB, ObjName: "1.localhost",
		Attrs: batchreq.AttrList{batchreq.NewAttr("Hold_Types", "uosxyz")}})
	add(batchreq.PBS_BATCH_Manager, &batchreq.Manage{Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_SERVER,
		Attrs: batchreq.AttrList{batchreq.NewAttr("scheduling", "maybe")}})
	add(batchreq.PBS_BATCH_AuthenUser, &batchreq.AuthenUser{Port: 70000})
	add(batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: "1.localhost", Signal: "SIGKILL"})
	add(batchreq.PBS_BATCH_MessJob, &batchreq.MessJob{JobID: "1.localhost", Message: "hello"})
	add(batchreq.PBS_BATCH_RunJob, &batchreq.RunJob{JobID: "1.localhost", Destination: "localhost"})
	add(batchreq.PBS_BATCH_TrackJob, &batchreq.TrackJob{JobID: "1.localhost"})
	add(batchreq.PBS_BATCH_JobObit, &batchreq.JobObit{JobID: "1.localhost"})
	out := make([][]byte, len(reqs))
	for i, r := range reqs {
		out[i] = r.Append(nil)
	}
	return out
}

// mutate returns a damaged copy of b: truncated, with flipped or
// replaced bytes, with an absurd length or count, or random bytes.
func mutate(rng *rand.Rand, b []byte) []byte {
	m := append([]byte(nil), b...)
	switch rng.IntN(7) {
	case 0: // truncated
		return m[:rng.IntN(len(m))]
	case 1: // flipped bytes
		for range 1 + rng.IntN(4) {
			m[rng.IntN(len(m))] ^= byte(1 << rng.IntN(8))
		}
	case 2: // a digit replaced by a sign or a letter
		for range 1 + rng.IntN(3) {
			m[rng.IntN(len(m))] = "+-9Z\x00"[rng.IntN(5)]
		}
	case 3: // an absurd count or length
		i := rng.IntN(len(m))
		huge := []string{"+9999999999", "-1", "+2147483648", "+999999999999999999999999", "3+2000000000"}[rng.IntN(5)]
		m = append(m[:i], append([]byte(huge), m[i:]...)...)
	case 4: // random bytes
		m = make([]byte, 1+rng.IntN(200))
		for i := range m {
			m[i] = byte(rng.Uint32())
		}
	case 5: // a valid prefix followed by junk
		m = m[:rng.IntN(len(m))]
		for range rng.IntN(64) {
			m = append(m, byte(rng.Uint32()))
		}
	}
	return m
}

// sendTCP writes msg on a fresh connection to addr, half-closes it and
// reads whatever comes back until the daemon closes (bounded).
func sendTCP(addr string, msg []byte, local *net.TCPAddr) error {
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != nil {
		d.LocalAddr = local
	}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	nc.Write(msg)
	nc.(*net.TCPConn).CloseWrite()
	io.Copy(io.Discard, nc)
	return nil
}

// authSend authenticates a fresh connection as user like pbs_iff and
// sends msg on it. Only a failure to connect or authenticate is an
// error: the server may well reset a connection that sent junk.
func authSend(d *load.Dialer, msg []byte) error {
	c, err := d.Dial()
	if err != nil {
		return err
	}
	c.Raw(msg)
	return nil
}

// TestMalformedInput sends malformed and truncated requests and random
// bytes to every port of pbs_server, pbs_mom and pbs_sched, then checks
// that all three still serve.
func TestMalformedInput(t *testing.T) {
	c := newCluster(t)
	c.startServer("create")
	c.setup()
	mom := c.startMom()
	sched := c.startSched()
	c.submit(20, 2)

	n := scale(5000, 100000)
	seeds := seedRequests("fuzzer")
	fuzzer := &load.Dialer{Addr: c.addr(), User: "fuzzer", Auth: true, Timeout: 10 * time.Second}
	tcpTargets := []string{c.addr(), fmt.Sprintf("127.0.0.1:%d", c.mom), fmt.Sprintf("127.0.0.1:%d", c.rm),
		fmt.Sprintf("127.0.0.1:%d", c.sched)}
	udpTargets := []int{c.server, c.rm}

	var sent, dialErrs atomic.Int64
	var wg sync.WaitGroup
	const workers = 8
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
			if err != nil {
				t.Error(err)
				return
			}
			defer udp.Close()
			// one worker sends its datagrams from a reserved port, as a
			// trusted MOM or server would
			if w == 0 {
				if r, err := net.ListenPacket("udp4", "127.0.0.1:"+strconv.Itoa(1000)); err == nil {
					udp.Close()
					udp = r
				}
			}
			for i := w; i < n; i += workers {
				msg := mutate(rng, seeds[rng.IntN(len(seeds))])
				var err error
				switch k := i % 10; {
				case k < 4: // server, unauthenticated
					err = sendTCP(c.addr(), msg, nil)
				case k < 6: // server, authenticated as an ordinary user
					err = authSend(fuzzer, msg)
				case k < 8: // MOM and scheduler TCP ports
					err = sendTCP(tcpTargets[1+rng.IntN(3)], msg, nil)
				default: // RPP datagrams: valid trailers with junk, or junk
					port := udpTargets[rng.IntN(len(udpTargets))]
					to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
					for _, d := range junkDatagrams(rng, msg) {
						udp.WriteTo(d, to)
					}
				}
				if err != nil {
					dialErrs.Add(1)
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d malformed messages sent, %d connection errors", sent.Load(), dialErrs.Load())
	if e := dialErrs.Load(); e > int64(n/100) {
		t.Errorf("%d connection errors: a daemon stopped accepting", e)
	}
	for _, p := range []*e2e.Daemon{c.srv, mom, sched} {
		if !p.Alive() {
			t.Fatalf("%s died (%v):\n%s", p.Name, p.Err(), p.Output())
		}
	}
	c.serving()
	// pbs_mom still answers resource-monitor queries, over TCP and RPP,
	// as the scheduler asks them.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, q := range []momquery.Querier{momquery.NewTCP(c.rm), momquery.NewRPP(c.rm)} {
		answers, err := q.Query(ctx, "127.0.0.1", []string{"ncpus", "arch"})
		if err != nil || len(answers) != 2 || !strings.HasPrefix(answers[0], "ncpus=") {
			t.Errorf("pbs_mom RM query (%T) after the junk: %q %v", q, answers, err)
		}
		if cl, ok := q.(interface{ Close() error }); ok {
			cl.Close()
		}
	}
	for _, a := range tcpTargets[1:] {
		nc, err := net.DialTimeout("tcp", a, 5*time.Second)
		if err != nil {
			t.Errorf("%s no longer accepts: %v", a, err)
			continue
		}
		nc.Close()
	}
}

// junkDatagrams returns RPP datagrams around msg: a HELLO1 and an EOD
// with msg as payload and correct trailers, packets of random type and
// stream, and raw junk.
func junkDatagrams(rng *rand.Rand, msg []byte) [][]byte {
	if len(msg) > rpp.MaxPayload {
		msg = msg[:rpp.MaxPayload]
	}
	stream := rng.Uint32N(8)
	out := [][]byte{
		rpp.Packet{Type: rpp.RPP_HELLO1, Stream: stream, Seq: rng.Uint32()}.Append(nil),
		rpp.Packet{Type: rpp.RPP_EOD, Stream: stream, Seq: rng.Uint32N(3), Payload: msg}.Append(nil),
		rpp.Packet{Type: rpp.Type(rng.IntN(8)), Stream: rng.Uint32(), Seq: rng.Uint32(), Payload: msg[:rng.IntN(len(msg)+1)]}.Append(nil),
	}
	if rng.IntN(2) == 0 {
		out = append(out, msg)
	}
	return out
}
