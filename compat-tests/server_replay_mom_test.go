package compattests

// This file holds the server replay's MOM for node vm (replayMom), which
// reports the capture cluster's status over RPP, accepts job launches and
// answers status polls, and the status it reports, taken from the
// captures.

import (
	"context"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
	"gopbs/momproto"
	"gopbs/rpp"
)

// replayMom is a MOM for node vm on loopback: the replayed server finds
// it through server.Config.ResolveHost, so the test does not depend on
// this machine's host name. It speaks IS over RPP (spec 10 §5): HELLO,
// then one STATUS with the items the capture cluster's MOM reported; on
// its batch port it accepts job launches (spec 10 §6.1) and answers
// status polls for the jobs it was given. It runs nothing.
type replayMom struct {
	ep  *rpp.Endpoint
	udp netip.AddrPort // the MOM's RPP address (the server's RMPort)
	ln  net.Listener   // the MOM's batch port (the server's MomPort)

	mu    sync.Mutex
	jobs  map[string]bool              // jobs launched here
	attrs map[string]batchreq.AttrList // what status polls report, by job
}

// setJobAttrs sets (replacing attributes of the same name and resource)
// what the MOM reports for job id when the server polls it.
func (m *replayMom) setJobAttrs(id string, list batchreq.AttrList) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.attrs[id]
	for _, a := range list {
		cur = slices.DeleteFunc(cur, func(b batchreq.Attr) bool { return b.FullName() == a.FullName() })
		cur = append(cur, a)
	}
	m.attrs[id] = cur
}

// jobIDs lists the jobs launched on the MOM.
func (m *replayMom) jobIDs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ids []string
	for id := range m.jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func newReplayMom(t *testing.T) *replayMom {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ep := rpp.NewEndpoint(pc, &rpp.Options{Timeout: 200 * time.Millisecond})
	t.Cleanup(func() { ep.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	m := &replayMom{ep: ep, udp: netip.MustParseAddrPort(pc.LocalAddr().String()), ln: ln, jobs: map[string]bool{}, attrs: map[string]batchreq.AttrList{}}
	go m.accept()
	return m
}

// momPort is the MOM's batch port.
func (m *replayMom) momPort() int { return m.ln.Addr().(*net.TCPAddr).Port }

func (m *replayMom) accept() {
	for {
		nc, err := m.ln.Accept()
		if err != nil {
			return
		}
		go m.serve(nc)
	}
}

// serve answers the server's requests on one connection.
func (m *replayMom) serve(nc net.Conn) {
	defer nc.Close()
	r := dis.NewReader(nc)
	for {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		req, err := batchreq.ReadRequest(r)
		if err != nil || req.Type == batchreq.PBS_BATCH_Disconnect {
			return
		}
		var p *batchreq.Reply
		switch b := req.Body.(type) {
		case *batchreq.QueueJob:
			p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Queue, b.JobID)
		case *batchreq.JobID:
			switch req.Type {
			case batchreq.PBS_BATCH_RdytoCommit:
				p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_RdytoCommit, b.ID)
			case batchreq.PBS_BATCH_Commit:
				m.mu.Lock()
				m.jobs[b.ID] = true
				m.mu.Unlock()
				p = batchreq.JobIDReply(batchreq.BATCH_REPLY_CHOICE_Commit, b.ID)
			}
		case *batchreq.StatusReq:
			m.mu.Lock()
			known, attrs := m.jobs[b.ID], slices.Clone(m.attrs[b.ID])
			m.mu.Unlock()
			if known {
				p = &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{{ObjType: batchreq.MGR_OBJ_JOB, Name: b.ID, Attrs: attrs}}}
			} else {
				p = batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, "", "")
			}
		}
		if p == nil {
			p = batchreq.NullReply()
		}
		if _, err := nc.Write(p.Append(nil)); err != nil {
			return
		}
	}
}

// resolve maps node vm to loopback; no other name resolves.
func (m *replayMom) resolve(name string) []netip.Addr {
	if name == captureHost {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	}
	return nil
}

// report says hello to the server at port and sends one IS_STATUS with
// the given items; the stream stays open (the node stays up) until the
// test ends.
func (m *replayMom) report(t *testing.T, port int, status []string) {
	st, err := m.ep.Open(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
	if err != nil {
		t.Fatal(err)
	}
	send := func(msg *momproto.ISMessage) {
		msg.Version = momproto.IS_PROTOCOL_VER
		if err := st.Send(msg.Append(nil)); err != nil {
			t.Fatalf("MOM: send %s: %v", momproto.ISCommandName(msg.Command), err)
		}
	}
	send(&momproto.ISMessage{Command: momproto.IS_HELLO})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := st.Recv(ctx)
	if err != nil {
		t.Fatalf("MOM: no reply to IS_HELLO: %v", err)
	}
	if msg, err := momproto.DecodeIS(b); err != nil || msg.Command != momproto.IS_CLUSTER_ADDRS {
		t.Fatalf("MOM: reply to IS_HELLO: %+v %v", msg, err)
	}
	send(&momproto.ISMessage{Command: momproto.IS_STATUS, Status: status})
	go func() { // drain pings until the stream or endpoint closes
		for {
			if _, err := st.Recv(context.Background()); err != nil {
				return
			}
		}
	}()
}

// capturedMomStatus returns the items of the first IS_STATUS the capture
// cluster's MOM sent in capture file, as the MOM words them.
func capturedMomStatus(t *testing.T, file string) []string {
	c, err := capture.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var asm rpp.Assembler
	for _, d := range c.Datagrams {
		p, err := rpp.Parse(d.Payload)
		if err != nil {
			continue
		}
		res := asm.Add(d.Src, d.Dst, p)
		if res.Message == nil || d.Dst.Port() != batchreq.PBS_BATCH_SERVICE_PORT {
			continue
		}
		if msg, err := momproto.DecodeIS(res.Message.Data); err == nil && msg.Command == momproto.IS_STATUS {
			return msg.Status
		}
	}
	t.Fatalf("%s: no IS_STATUS from the MOM", file)
	return nil
}

// capturedNodeStatus returns the status attribute of node vm in the first
// StatusNode reply of capture file.
func capturedNodeStatus(t *testing.T, file string) string {
	if attrs := capturedAttrs(t, file, captureHost, "status"); len(attrs) > 0 {
		return attrs[0].Value
	}
	t.Fatalf("%s: no status attribute of node %s", file, captureHost)
	return ""
}

// momStatusAt returns the MOM's IS_STATUS items (names, order and wording
// of capture 75) carrying the values the server showed in the node's
// status attribute of capture 15: the machine's load, memory and idle
// time moved between the two captures. Items the status attribute shows
// blank keep the MOM's wording ("jobs= ").
func momStatusAt(t *testing.T, dir string) []string {
	items := capturedMomStatus(t, filepath.Join(dir, "75-idle-65s.pcap"))
	shown := map[string]string{}
	for _, kv := range strings.Split(capturedNodeStatus(t, filepath.Join(dir, "15-qmgr-list-node-vm.pcap")), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			shown[k] = v
		}
	}
	out := make([]string, len(items))
	for i, kv := range items {
		out[i] = kv
		if k, _, ok := strings.Cut(kv, "="); ok {
			if v := shown[k]; v != "" {
				out[i] = k + "=" + v
			}
		}
	}
	return out
}
