package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/momproto"
	"gopbs/rpp"
)

// counters are the simulator's statistics, shared by all nodes.
type counters struct {
	hellos, clusterAddrs, statuses, rmQueries, batchReqs, errors atomic.Int64
}

// node is one simulated pbs_mom: an RPP endpoint on addr:rmPort that
// reports to the server over IS and answers RM queries, and a TCP
// listener on addr:momPort that accepts job launches.
type node struct {
	addr     netip.Addr
	name     string
	np       int
	physKB   int64
	server   netip.AddrPort
	interval time.Duration
	stats    *counters

	ep    *rpp.Endpoint
	ln    net.Listener
	adopt chan *rpp.Stream // a stream the server opened to us and we answered (its ping)
}

func (n *node) listen(rmPort, momPort int) error {
	pc, err := net.ListenPacket("udp4", netip.AddrPortFrom(n.addr, uint16(rmPort)).String())
	if err != nil {
		return fmt.Errorf("node %s: RPP socket: %w", n.name, err)
	}
	n.ep = rpp.NewEndpoint(pc, nil)
	n.adopt = make(chan *rpp.Stream, 1)
	if momPort > 0 {
		if n.ln, err = net.Listen("tcp4", netip.AddrPortFrom(n.addr, uint16(momPort)).String()); err != nil {
			n.ep.Close()
			return fmt.Errorf("node %s: batch listener: %w", n.name, err)
		}
	}
	return nil
}

// run serves until ctx ends. The first status report is delayed by
// stagger so that thousands of nodes do not report in lockstep.
func (n *node) run(ctx context.Context, stagger time.Duration) {
	defer n.ep.Close()
	if n.ln != nil {
		defer n.ln.Close()
		go n.serveBatch(ctx)
	}
	go n.serveRM(ctx)
	select {
	case <-ctx.Done():
		return
	case <-time.After(stagger):
	}
	for ctx.Err() == nil {
		pause := n.interval
		if n.reportIS(ctx) {
			// The server closed a stream it had answered on (it shut
			// down or restarted): say hello again at once, as pbs_mom
			// does, after a moment for the GOODBYE exchange.
			pause = reopenPause
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
}

// reopenPause is the wait before a new IS stream after the server closed
// the previous one.
const reopenPause = 100 * time.Millisecond

// reportIS opens the IS stream, says hello and sends a status report
// every interval until the stream fails. A ping from the server (a
// stream it opened to us, answered by serveRM) replaces the stream, as
// pbs_mom carries on over the stream of a restarted server. It reports
// whether the stream ended by the server's GOODBYE after the server had
// spoken on it.
func (n *node) reportIS(ctx context.Context) bool {
	st, err := n.ep.Open(n.server)
	if err != nil {
		n.stats.errors.Add(1)
		return false
	}
	defer func() { st.Close() }() // whichever stream is current at the end
	hello := &momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_HELLO}
	if st.Send(hello.Append(nil)) != nil {
		n.stats.errors.Add(1)
		return false
	}
	n.stats.hellos.Add(1)
	var answered atomic.Bool
	read := func(st *rpp.Stream) chan error {
		done := make(chan error, 1)
		go func() {
			for {
				b, err := st.Recv(ctx)
				if err != nil {
					done <- err
					return
				}
				msg, err := momproto.DecodeIS(b)
				if err != nil {
					n.stats.errors.Add(1)
					done <- err
					return
				}
				answered.Store(true)
				if msg.Command == momproto.IS_CLUSTER_ADDRS {
					n.stats.clusterAddrs.Add(1)
				}
			}
		}()
		return done
	}
	failed := read(st)
	t := time.NewTicker(n.interval)
	defer t.Stop()
	for {
		if st.Send(n.status().Append(nil)) != nil {
			n.stats.errors.Add(1)
			return false
		}
		n.stats.statuses.Add(1)
		select {
		case <-ctx.Done():
			return false
		case err := <-failed:
			return errors.Is(err, io.EOF) && answered.Load()
		case ns := <-n.adopt:
			st.Close()
			st, failed = ns, read(ns)
			answered.Store(true)
		case <-t.C:
		}
	}
}

// status is the node's IS_STATUS report.
func (n *node) status() *momproto.ISMessage {
	now := time.Now().Unix()
	return &momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_STATUS, Status: []string{
		"opsys=linux", "uname=Linux " + n.name + " 6.0 #1 SMP x86_64", "sessions=? 15201", "nsessions=? 15201",
		"nusers=0", "idletime=" + strconv.FormatInt(now%100000, 10),
		"totmem=" + strconv.FormatInt(n.physKB*2, 10) + "kb", "availmem=" + strconv.FormatInt(n.physKB*2-100000, 10) + "kb",
		"physmem=" + strconv.FormatInt(n.physKB, 10) + "kb", "ncpus=" + strconv.Itoa(n.np), "loadave=0.00",
		"gres=", "netload=0", "size=100000000kb:200000000kb", "state=free", "jobs=", "varattr=",
		"rectime=" + strconv.FormatInt(now, 10),
	}}
}

// rmAnswer answers one RM request line.
func (n *node) rmAnswer(line string) string {
	switch line {
	case "ncpus":
		return "ncpus=" + strconv.Itoa(n.np)
	case "arch":
		return "arch=linux"
	case "physmem":
		return "physmem=" + strconv.FormatInt(n.physKB, 10) + "kb"
	case "loadave":
		return "loadave=0.00"
	case "max_load", "ideal_load":
		return line + "=" + strconv.Itoa(n.np)
	case "state":
		return "state=free"
	case "opsys":
		return "opsys=linux"
	}
	return line + "=? 15201" // PBSE_RMUNKNOWN
}

// serveRM accepts RM streams (the scheduler's queries) and answers them.
func (n *node) serveRM(ctx context.Context) {
	for {
		st, err := n.ep.Accept(ctx)
		if err != nil {
			return
		}
		if st.RemoteAddr() == n.server {
			go n.servePing(ctx, st)
			continue
		}
		go func() {
			defer st.Close()
			for {
				b, err := st.Recv(ctx)
				if err != nil {
					return
				}
				req, err := momproto.DecodeRMRequest(b)
				if err != nil {
					n.stats.errors.Add(1)
					return
				}
				switch req.Command {
				case momproto.RM_CMD_CLOSE:
					return
				case momproto.RM_CMD_REQUEST:
					rep := &momproto.RMReply{Code: momproto.RM_RSP_OK}
					for _, l := range req.Lines {
						rep.Answers = append(rep.Answers, n.rmAnswer(strings.TrimSpace(l)))
					}
					n.stats.rmQueries.Add(1)
					if st.Send(rep.Append(nil)) != nil {
						return
					}
				default:
					st.Send((&momproto.RMReply{Code: momproto.RM_RSP_ERROR}).Append(nil))
				}
			}
		}()
	}
}

// servePing serves a stream the server opened to us (its start-up ping
// after a restart): IS_HELLO is answered with IS_HELLO and the stream
// becomes the node's IS stream, as pbs_mom does (spec 10 §5.2).
func (n *node) servePing(ctx context.Context, st *rpp.Stream) {
	for {
		b, err := st.Recv(ctx)
		if err != nil {
			st.Close()
			return
		}
		msg, err := momproto.DecodeIS(b)
		if err != nil {
			n.stats.errors.Add(1)
			st.Close()
			return
		}
		if msg.Command != momproto.IS_HELLO {
			continue
		}
		hello := &momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_HELLO}
		if st.Send(hello.Append(nil)) != nil {
			st.Close()
			return
		}
		n.stats.hellos.Add(1)
		select {
		case n.adopt <- st:
		default:
			st.Close() // one adoption is already pending
		}
		return
	}
}

// serveBatch accepts the server's job launches and answers them as a
// MOM that starts the job and keeps it running: QueueJob, JobScript,
// RdytoCommit and Commit succeed, status requests get an empty status,
// everything else a null reply. Jobs never end.
func (n *node) serveBatch(ctx context.Context) {
	for {
		c, err := n.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			r := dis.NewReader(bufio.NewReader(c))
			for {
				c.SetDeadline(time.Now().Add(time.Minute))
				req, err := batchreq.ReadRequest(r)
				if err != nil {
					if !errors.Is(err, io.EOF) {
						n.stats.errors.Add(1)
					}
					return
				}
				if req.Type == batchreq.PBS_BATCH_Disconnect {
					return
				}
				n.stats.batchReqs.Add(1)
				var p *batchreq.Reply
				switch b := req.Body.(type) {
				case *batchreq.QueueJob:
					p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, b.JobID)
				case *batchreq.JobID:
					switch req.Type {
					case batchreq.PBS_BATCH_RdytoCommit:
						p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_RdytoCommit, b.ID)
					case batchreq.PBS_BATCH_Commit:
						p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, b.ID)
					}
				case *batchreq.StatusReq:
					p = &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status}
				}
				if p == nil {
					p = batchreq.NullReply()
				}
				if _, err := c.Write(p.Append(nil)); err != nil {
					return
				}
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
}
