package server

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/momproto"
	"gopbs/rpp"
	"gopbs/server/monitor"
	"gopbs/server/state"
)

// defaultNodeCheckRate is node_check_rate's default (spec 10 §5.6).
const defaultNodeCheckRate = 150

// acceptIS accepts the IS streams MOMs open to the server.
func (rl *runLink) acceptIS() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-rl.s.done
		cancel()
	}()
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(rl.pingDelay):
			rl.pingNodes(ctx)
		}
	}()
	for {
		st, err := rl.ep.Accept(ctx)
		if err != nil {
			return
		}
		go rl.serveIS(ctx, st)
	}
}

// nodeAddrMaxAge is how long nodeByAddr trusts the addresses it
// resolved while the node list stays the same; nodeAddrMissRetry is how
// often an address no node has may make it resolve the names again
// (a node's host name may have changed address).
const (
	nodeAddrMaxAge    = 5 * time.Minute
	nodeAddrMissRetry = 5 * time.Second
)

// nodeAddrIndex maps the addresses of the nodes' host names to the
// nodes, so that a new IS stream does not resolve every node's name
// (with 10,000 nodes that was 10,000 host lookups per stream).
type nodeAddrIndex struct {
	mu       sync.Mutex
	nodes    []*state.Node         // the node list the index was built from
	byAddr   map[netip.Addr]string // first node having each address
	loopback string                // first node with a loopback address
	cluster  []uint32              // the nodes' IPv4 addresses, in node order (IS_CLUSTER_ADDRS)
	// clusterGen numbers the contents of cluster: it grows whenever a
	// rebuild changes the list, so that the streams that got an older
	// list are known (announceCluster).
	clusterGen uint64
	clusterMsg []byte // the IS_CLUSTER_ADDRS message of cluster, encoded once
	built      time.Time
}

// nodeByAddr returns the name of the node whose host name resolves to a
// (spec 10 §3.1): the first node with exactly that address, else, for a
// loopback address, the first node whose name resolves to a loopback
// address (several MOMs may run on 127.0.0.x). Called without locks.
func (rl *runLink) nodeByAddr(a netip.Addr) string {
	a = a.Unmap()
	ix := &rl.nodeAddrs
	ix.mu.Lock()
	defer ix.mu.Unlock()
	now := time.Now()
	if !rl.nodesUnchanged(ix.nodes) || now.Sub(ix.built) > nodeAddrMaxAge {
		rl.indexNodeAddrs(now)
	}
	name, ok := ix.byAddr[a]
	if !ok && !a.IsLoopback() && now.Sub(ix.built) > nodeAddrMissRetry {
		rl.indexNodeAddrs(now)
		name, ok = ix.byAddr[a]
	}
	if ok {
		return name
	}
	if a.IsLoopback() {
		return ix.loopback
	}
	return ""
}

// nodesUnchanged reports whether the server's node list is still nodes.
func (rl *runLink) nodesUnchanged(nodes []*state.Node) bool {
	rl.s.mu.RLock()
	defer rl.s.mu.RUnlock()
	if nodes == nil || len(nodes) != len(rl.s.nodes) {
		return false
	}
	for i, n := range rl.s.nodes {
		if n != nodes[i] {
			return false
		}
	}
	return true
}

// indexNodeAddrs resolves every node's name into rl.nodeAddrs, whose
// lock the caller holds.
func (rl *runLink) indexNodeAddrs(now time.Time) {
	rl.s.mu.RLock()
	nodes := append([]*state.Node{}, rl.s.nodes...)
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	rl.s.mu.RUnlock()
	ix := &rl.nodeAddrs
	ix.nodes, ix.byAddr, ix.loopback, ix.built = nodes, make(map[netip.Addr]string, len(nodes)), "", now
	var cluster []uint32
	for _, name := range names {
		for _, x := range rl.resolve(name) {
			if x.Is4() {
				b := x.As4()
				cluster = append(cluster, uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8|uint32(b[3]))
			}
			if _, dup := ix.byAddr[x]; !dup {
				ix.byAddr[x] = name
			}
			if ix.loopback == "" && x.IsLoopback() {
				ix.loopback = name
			}
		}
	}
	if ix.clusterMsg == nil || !slices.Equal(cluster, ix.cluster) {
		ix.cluster = cluster
		ix.clusterGen++
		ix.clusterMsg = (&momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_CLUSTER_ADDRS, Addrs: cluster}).Append(nil)
	}
}

// serveIS reads the IS messages of a stream a MOM opened.
func (rl *runLink) serveIS(ctx context.Context, st *rpp.Stream) {
	s := rl.s
	addr := st.RemoteAddr().Addr()
	name := rl.nodeByAddr(addr)
	if name == "" {
		s.logError("is_request", "bad attempt to connect from "+addr.String()+" (address not trusted - check entry in server_priv/nodes)")
		st.Close()
		return
	}
	rl.serveNodeIS(ctx, st, name)
}

// pingNodes says IS_HELLO to the MOM of every node that is down and has
// no IS stream, as the server does 5 s after it starts (spec 10 §5.6).
func (rl *runLink) pingNodes(ctx context.Context) {
	s := rl.s
	s.mu.RLock()
	var names []string
	for _, n := range s.nodes {
		if n.State&state.NodeStateDown != 0 {
			names = append(names, n.Name)
		}
	}
	s.mu.RUnlock()
	rl.mu.Lock()
	todo := names[:0]
	for _, name := range names {
		if rl.streams[name] == nil {
			todo = append(todo, name)
		}
	}
	rl.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	s.log.Logf(logline.EventSched, logline.ClassRequest, "ping_nodes", "ping attempting to contact %d nodes", len(todo))
	for _, name := range todo {
		rl.pingNode(ctx, name)
	}
}

// pingNode opens a stream to the MOM of node name and says IS_HELLO on
// it. The stream becomes the node's IS stream only when the MOM speaks
// on it (serveNodeIS): a MOM that opened its own stream meanwhile, the
// two opens crossing between the same two UDP ports, keeps the stream it
// speaks on, whichever that is.
func (rl *runLink) pingNode(ctx context.Context, name string) {
	s := rl.s
	addrs := rl.resolve(name)
	if len(addrs) == 0 {
		return
	}
	// The endpoint's retransmission defaults, not the 2 s × 2 retries
	// TORQUE sets while its ping loop runs (spec 10 §2.4): a MOM answers
	// the ping and carries on over its stream, so a ping given up early
	// under load (thousands of MOMs at once after a restart) would leave
	// that MOM talking to a stream the server no longer knows.
	st, err := rl.ep.Open(netip.AddrPortFrom(addrs[0], uint16(s.cfg.RMPort)))
	if err != nil {
		return
	}
	if err := st.Send((&momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_HELLO}).Append(nil)); err != nil {
		st.Close()
		return
	}
	s.log.Logf(logline.EventSched, logline.ClassRequest, "ping_nodes", "successful ping to node %s (stream %d)", name, st.Index())
	rl.mu.Lock()
	if old := rl.pings[name]; old != nil {
		old.Close()
	}
	rl.pings[name] = st
	rl.pingAt[name] = time.Now()
	rl.mu.Unlock()
	go rl.serveNodeIS(ctx, st, name)
}

// serveNodeIS reads the IS messages of a stream to node name's MOM, one
// the MOM opened or the server's ping. The stream on which the MOM last
// spoke is the node's stream (rl.streams): a message on another one
// makes that one the node's and closes the previous stream, whose end
// then says nothing about the node. Only the end of the node's stream
// marks it down.
func (rl *runLink) serveNodeIS(ctx context.Context, st *rpp.Stream, name string) {
	s := rl.s
	defer func() {
		rl.mu.Lock()
		if rl.streams[name] == st {
			delete(rl.streams, name)
		}
		if rl.pings[name] == st {
			delete(rl.pings, name)
			delete(rl.pingAt, name)
		}
		rl.addrsSent.forget(st)
		rl.mu.Unlock()
	}()
	for {
		b, err := st.Recv(ctx)
		if err != nil {
			// A stream the server closed itself (shutdown, or replaced)
			// ends without a word, as TORQUE logs nothing for its
			// nodes when it shuts down.
			if ctx.Err() != nil || errors.Is(err, rpp.ErrClosed) || !rl.nodeStream(name, st) || rl.movedToPing(ctx, name, st) {
				st.Close()
				return
			}
			why := "End of File"
			if !errors.Is(err, io.EOF) {
				why = "Premature end of message"
			}
			s.logError("stream_eof", "connection to "+name+" is bad, remote service may be down, message may be corrupt, or connection may have been dropped remotely ("+why+").  setting node state to down")
			rl.setNodeState(name, func(st int) int { return st | state.NodeStateDown })
			st.Close()
			return
		}
		rl.adoptStream(name, st)
		msg, err := momproto.DecodeIS(b)
		if err != nil {
			s.logError("is_request", "bad IS message from "+name+": "+err.Error())
			rl.setNodeState(name, func(st int) int { return st | state.NodeStateDown })
			st.Close()
			return
		}
		switch msg.Command {
		case momproto.IS_NULL:
		case momproto.IS_HELLO:
			s.log.Logf(logline.EventSystem, logline.ClassServer, "is_request", "HELLO received from %s", name)
			// The MOM is up; the node stays offline until its first
			// status (nodeStatus).
			rl.setNodeState(name, func(st int) int { return st &^ state.NodeStateDown })
			msg, gen := rl.clusterAddrsMsg()
			if err := st.Send(msg); err == nil {
				s.log.Logf(logline.EventSystem, logline.ClassServer, "send_cluster_addrs", "successful addr to node %s", name)
				rl.mu.Lock()
				if rl.streams[name] == st {
					rl.addrsSent.note(st, gen)
				}
				rl.mu.Unlock()
			}
			rl.announceCluster(gen)
		case momproto.IS_UPDATE:
			bits := int(msg.State)
			rl.setNodeState(name, func(st int) int {
				st &^= state.NodeStateDown | state.NodeStateBusy | state.NodeStateUnknown
				if bits&momproto.INUSE_DOWN != 0 {
					st |= state.NodeStateDown
				}
				if bits&momproto.INUSE_BUSY != 0 {
					st |= state.NodeStateBusy
				}
				return st
			})
		case momproto.IS_STATUS:
			rl.nodeStatus(name, msg.Status)
			rl.dropPing(name, st)
		case momproto.IS_GPU_STATUS:
		default:
			s.logError("is_request", "unknown command from "+name)
			rl.setNodeState(name, func(st int) int { return st | state.NodeStateUnknown })
			st.Close()
			return
		}
	}
}

// nodeStream reports whether st is node name's IS stream.
func (rl *runLink) nodeStream(name string, st *rpp.Stream) bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.streams[name] == st
}

// pingSwitchWait bounds how long the end of a node's stream waits for
// the MOM's answer to a pending ping before it marks the node down.
const pingSwitchWait = 5 * time.Second

// movedToPing reports whether node name's MOM, whose stream st ended,
// went over to the server's ping: pbs_mom answers the ping's IS_HELLO
// and then closes its own stream, and the server may read the two in
// either order. While a ping to the node is pending it waits up to
// pingSwitchWait for the answer.
func (rl *runLink) movedToPing(ctx context.Context, name string, st *rpp.Stream) bool {
	deadline := time.Now().Add(pingSwitchWait)
	for {
		rl.mu.Lock()
		moved, pending := rl.streams[name] != st, rl.pings[name] != nil
		rl.mu.Unlock()
		if moved {
			return true
		}
		if !pending || time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return true
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// adoptStream makes st, on which node name's MOM just spoke, the node's
// IS stream, closing the one it had before.
func (rl *runLink) adoptStream(name string, st *rpp.Stream) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	old := rl.streams[name]
	if old == st {
		return
	}
	rl.streams[name] = st
	if rl.pings[name] == st {
		delete(rl.pings, name)
		delete(rl.pingAt, name)
	}
	if old != nil {
		old.Close()
	}
}

// pingAnswerWait is how long a ping stays open, unanswered, while its
// MOM reports on another stream: pbs_mom answers a ping and goes over to
// it, which under the load of thousands of MOMs at once may take
// seconds; a MOM that never answers keeps its own stream.
const pingAnswerWait = 30 * time.Second

// dropPing closes the server's ping to node name when the MOM reports
// its status on another stream, st, and the ping has waited
// rl.pingAnswerWait for an answer.
func (rl *runLink) dropPing(name string, st *rpp.Stream) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if p := rl.pings[name]; p != nil && p != st && time.Since(rl.pingAt[name]) >= rl.pingAnswerWait {
		delete(rl.pings, name)
		delete(rl.pingAt, name)
		p.Close()
	}
}

// clusterAddrsDelay is how long after a MOM's hello the server sends the
// node addresses again to every MOM it has a stream with (capture 104:
// 2 s after the new node vm2 said hello, both vm and vm2 got
// IS_CLUSTER_ADDRS and answered with a fresh IS_STATUS).
const clusterAddrsDelay = 2 * time.Second

// clusterAddrsRate bounds the bytes per second that re-sends of
// IS_CLUSTER_ADDRS to every MOM may cost: with 10,000 nodes one re-send
// is 10,000 copies of a 110 KB list, so the next one waits until the
// previous one's bytes at this rate have passed.
const clusterAddrsRate = 64 << 20

// addrsSent records which IS_CLUSTER_ADDRS list (the generation of the
// address index) each IS stream last got, and how many streams hold
// each generation. Guarded by runLink.mu.
type addrsSent struct {
	gen   map[*rpp.Stream]uint64
	count map[uint64]int
}

// note records that st got the list of generation gen.
func (a *addrsSent) note(st *rpp.Stream, gen uint64) {
	if a.gen == nil {
		a.gen, a.count = make(map[*rpp.Stream]uint64), make(map[uint64]int)
	}
	a.forget(st)
	a.gen[st] = gen
	a.count[gen]++
}

// forget drops a stream that ended.
func (a *addrsSent) forget(st *rpp.Stream) {
	old, ok := a.gen[st]
	if !ok {
		return
	}
	delete(a.gen, st)
	if a.count[old]--; a.count[old] <= 0 {
		delete(a.count, old)
	}
}

// staleBefore reports whether some stream got a list older than gen.
func (a *addrsSent) staleBefore(gen uint64) bool {
	for g := range a.count {
		if g < gen {
			return true
		}
	}
	return false
}

// announceCluster schedules, when a MOM's hello was answered with the
// list of generation gen while some other MOM's stream still holds an
// older list, one re-send of IS_CLUSTER_ADDRS to every node's stream: a
// MOM accepts IM and RM traffic only from the addresses of that list, so
// the MOMs that were up before a node was added must learn of it.
// Hellos within the delay share one re-send. A lone node (captures 77,
// 102, 103) gets none, and neither do MOMs whose lists are all current
// (10,000 MOMs saying hello to a server whose nodes were all created
// before: each got the whole list with its own answer).
func (rl *runLink) announceCluster(gen uint64) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.addrsDue || !rl.addrsSent.staleBefore(gen) {
		return
	}
	rl.addrsDue = true
	delay := max(rl.addrsDelay, time.Until(rl.addrsNotBefore))
	time.AfterFunc(delay, rl.sendClusterAddrs)
}

// sendClusterAddrs sends IS_CLUSTER_ADDRS to every node's IS stream if
// one of them holds an outdated list.
func (rl *runLink) sendClusterAddrs() {
	select {
	case <-rl.s.done:
		return
	default:
	}
	msg, gen := rl.clusterAddrsMsg()
	rl.mu.Lock()
	rl.addrsDue = false
	if !rl.addrsSent.staleBefore(gen) {
		rl.mu.Unlock()
		return
	}
	type target struct {
		name string
		st   *rpp.Stream
	}
	targets := make([]target, 0, len(rl.streams))
	for name, st := range rl.streams {
		targets = append(targets, target{name, st})
	}
	cost := time.Duration(int64(len(msg)) * int64(len(targets)) * int64(time.Second) / clusterAddrsRate)
	rl.addrsNotBefore = time.Now().Add(cost)
	rl.mu.Unlock()
	sort.Slice(targets, func(i, j int) bool { return targets[i].name < targets[j].name })
	for _, t := range targets {
		if err := t.st.Send(msg); err == nil {
			rl.s.log.Logf(logline.EventSystem, logline.ClassServer, "send_cluster_addrs", "successful addr to node %s", t.name)
			rl.mu.Lock()
			if rl.streams[t.name] == t.st {
				rl.addrsSent.note(t.st, gen)
			}
			rl.mu.Unlock()
		}
	}
}

// clusterAddrs returns the IPv4 addresses of every node, in node order,
// as IS_CLUSTER_ADDRS carries them.
func (rl *runLink) clusterAddrs() []uint32 {
	ix := rl.clusterIndex()
	defer ix.mu.Unlock()
	return ix.cluster // never modified: each rebuild makes a new slice
}

// clusterAddrsMsg returns the encoded IS_CLUSTER_ADDRS message of every
// node's address and the generation of that list.
func (rl *runLink) clusterAddrsMsg() ([]byte, uint64) {
	ix := rl.clusterIndex()
	defer ix.mu.Unlock()
	return ix.clusterMsg, ix.clusterGen // never modified: each change makes a new slice
}

// clusterIndex returns the address index, up to date and locked.
func (rl *runLink) clusterIndex() *nodeAddrIndex {
	ix := &rl.nodeAddrs
	ix.mu.Lock()
	if now := time.Now(); ix.clusterMsg == nil || !rl.nodesUnchanged(ix.nodes) || now.Sub(ix.built) > nodeAddrMaxAge {
		rl.indexNodeAddrs(now)
	}
	return ix
}

// setNodeState changes a node's state bits.
func (rl *runLink) setNodeState(name string, f func(int) int) {
	s := rl.s
	s.mu.Lock()
	if n := s.nodeByName[name]; n != nil {
		n.State = f(n.State)
	}
	s.mu.Unlock()
}

// nodeStatus stores an IS_STATUS list as the node's status attribute
// (reversed, rectime first, spec 10 §5.3) and applies its state.
func (rl *runLink) nodeStatus(name string, items []string) {
	s := rl.s
	now := s.now()
	rl.mu.Lock()
	rl.heard[name] = now
	rl.mu.Unlock()
	list := []string{"rectime=" + strconv.FormatInt(now.Unix(), 10)}
	for i := len(items) - 1; i >= 0; i-- {
		for _, part := range strings.Split(items[i], ",") {
			list = append(list, strings.TrimRight(part, " "))
		}
	}
	s.mu.Lock()
	n := s.nodeByName[name]
	if n == nil {
		s.mu.Unlock()
		return
	}
	n.Attrs.Set(pbsattr.NodeStatus, strings.Join(list, ","))
	n.State &^= state.NodeStateNotReported
	errDown := false
	var stray []string
	for _, it := range items {
		k, v, _ := strings.Cut(it, "=")
		switch k {
		case "message":
			errDown = strings.HasPrefix(v, "ERROR") && s.flag(pbsattr.SrvDownOnError)
		case "jobs":
			if s.flag(pbsattr.SrvMomJobSync) {
				stray = s.strayJobs(name, strings.Fields(v))
			}
		case "state":
			switch v {
			case "down":
				n.State |= state.NodeStateDown
			case "busy":
				n.State = n.State&^(state.NodeStateDown|state.NodeStateUnknown) | state.NodeStateBusy
			case "free":
				n.State &^= state.NodeStateDown | state.NodeStateUnknown | state.NodeStateBusy
			default:
				n.State |= state.NodeStateUnknown
				s.log.Logf(logline.EventError, logline.ClassNode, name, "unknown state %q reported", v)
			}
		case "ncpus":
			if s.flag(pbsattr.SrvAutoNodeNP) {
				if x, err := strconv.Atoi(v); err == nil && x > 0 && x != n.NP {
					n.NP = x
				}
			}
		}
	}
	if errDown {
		n.State |= state.NodeStateDown // a health-check error with down_on_error
	}
	s.mu.Unlock()
	// jobs the MOM holds but the server does not run there (mom_job_sync)
	for _, id := range stray {
		go rl.momRequest(name, batchreq.PBS_BATCH_DeleteJob, &batchreq.Manage{Command: batchreq.MGR_CMD_DELETE, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id}, "")
	}
}

// checkNodes marks nodes down whose MOM has not reported for
// node_check_rate seconds.
func (rl *runLink) checkNodes() {
	s := rl.s
	now := s.now()
	s.mu.RLock()
	rate := s.serverLong(pbsattr.SrvNodeCheckRate, defaultNodeCheckRate)
	s.mu.RUnlock()
	if rate <= 0 {
		rate = defaultNodeCheckRate
	}
	limit := time.Duration(rate) * time.Second
	rl.mu.Lock()
	var stale []string
	for name, t := range rl.heard {
		if now.Sub(t) > limit {
			stale = append(stale, name)
			delete(rl.heard, name)
		}
	}
	rl.mu.Unlock()
	for _, name := range stale {
		s.mu.Lock()
		if n := s.nodeByName[name]; n != nil && n.State&state.NodeStateDown == 0 {
			n.State |= state.NodeStateDown
			s.obs.MomLinkError(monitor.MomSilent)
			s.log.Logf(logline.EventSystem|logline.EventAdmin, logline.ClassNode, name, "node %s not detected in %d seconds, marking node down", name, rate)
		}
		s.mu.Unlock()
	}
}

// nodeUp reports whether a job may be sent to or relayed for the MOM of
// node name (not DOWN, DELETED or UNKNOWN). Called with s.mu held.
func (s *Server) nodeUp(name string) bool {
	n := s.nodeByName[name]
	if n == nil {
		return len(s.nodes) == 0 // jobs run on the server host when there are no nodes
	}
	return n.State&(state.NodeStateDown|state.NodeStateUnknown) == 0
}

// strayJobs returns the job ids a MOM reports that the server does not
// know as running there (mom_job_sync, spec 10 §5.4). Called with s.mu
// held.
func (s *Server) strayJobs(node string, ids []string) []string {
	var out []string
	for _, id := range ids {
		j := s.jobs.Get(id)
		if j == nil || j.State != pbsattr.StateRunning && j.State != pbsattr.StateExiting {
			out = append(out, id)
			continue
		}
		here := false
		for _, x := range execSlots(j.Attrs.Get(pbsattr.JobExecHost)) {
			if x.host == node {
				here = true
			}
		}
		if !here {
			out = append(out, id)
		}
	}
	return out
}
