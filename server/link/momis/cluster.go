package momis

// The node address index: which node an IS stream's address belongs to,
// and the list of every node's address that MOMs are sent
// (IS_CLUSTER_ADDRS), with its re-sends when nodes are added.

import (
	"net/netip"
	"slices"
	"sort"
	"sync"
	"time"

	"gopbs/internal/logline"
	"gopbs/momproto"
	"gopbs/rpp"
	"gopbs/server/state"
)

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
func (l *Link) nodeByAddr(a netip.Addr) string {
	a = a.Unmap()
	ix := &l.nodeAddrs
	ix.mu.Lock()
	defer ix.mu.Unlock()
	now := time.Now()
	if !l.nodesUnchanged(ix.nodes) || now.Sub(ix.built) > nodeAddrMaxAge {
		l.indexNodeAddrs(now)
	}
	name, ok := ix.byAddr[a]
	if !ok && !a.IsLoopback() && now.Sub(ix.built) > nodeAddrMissRetry {
		l.indexNodeAddrs(now)
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
func (l *Link) nodesUnchanged(nodes []*state.Node) bool {
	return nodes != nil && l.nodes.Same(nodes)
}

// indexNodeAddrs resolves every node's name into l.nodeAddrs, whose
// lock the caller holds.
func (l *Link) indexNodeAddrs(now time.Time) {
	nodes, names := l.nodes.List()
	ix := &l.nodeAddrs
	ix.nodes, ix.byAddr, ix.loopback, ix.built = nodes, make(map[netip.Addr]string, len(nodes)), "", now
	var cluster []uint32
	for _, name := range names {
		for _, x := range l.nodes.Resolve(name) {
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
func (l *Link) announceCluster(gen uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addrsDue || !l.addrsSent.staleBefore(gen) {
		return
	}
	l.addrsDue = true
	delay := max(l.AddrsDelay, time.Until(l.addrsNotBefore))
	time.AfterFunc(delay, l.sendClusterAddrs)
}

// sendClusterAddrs sends IS_CLUSTER_ADDRS to every node's IS stream if
// one of them holds an outdated list.
func (l *Link) sendClusterAddrs() {
	select {
	case <-l.done:
		return
	default:
	}
	msg, gen := l.clusterAddrsMsg()
	l.mu.Lock()
	l.addrsDue = false
	if !l.addrsSent.staleBefore(gen) {
		l.mu.Unlock()
		return
	}
	type target struct {
		name string
		st   *rpp.Stream
	}
	targets := make([]target, 0, len(l.streams))
	for name, st := range l.streams {
		targets = append(targets, target{name, st})
	}
	cost := time.Duration(int64(len(msg)) * int64(len(targets)) * int64(time.Second) / clusterAddrsRate)
	l.addrsNotBefore = time.Now().Add(cost)
	l.mu.Unlock()
	sort.Slice(targets, func(i, j int) bool { return targets[i].name < targets[j].name })
	for _, t := range targets {
		if err := t.st.Send(msg); err == nil {
			l.log.Logf(logline.EventSystem, logline.ClassServer, "send_cluster_addrs", "successful addr to node %s", t.name)
			l.mu.Lock()
			if l.streams[t.name] == t.st {
				l.addrsSent.note(t.st, gen)
			}
			l.mu.Unlock()
		}
	}
}

// clusterAddrs returns the IPv4 addresses of every node, in node order,
// as IS_CLUSTER_ADDRS carries them.
func (l *Link) clusterAddrs() []uint32 {
	ix := l.clusterIndex()
	defer ix.mu.Unlock()
	return ix.cluster // never modified: each rebuild makes a new slice
}

// clusterAddrsMsg returns the encoded IS_CLUSTER_ADDRS message of every
// node's address and the generation of that list.
func (l *Link) clusterAddrsMsg() ([]byte, uint64) {
	ix := l.clusterIndex()
	defer ix.mu.Unlock()
	return ix.clusterMsg, ix.clusterGen // never modified: each change makes a new slice
}

// clusterIndex returns the address index, up to date and locked.
func (l *Link) clusterIndex() *nodeAddrIndex {
	ix := &l.nodeAddrs
	ix.mu.Lock()
	if now := time.Now(); ix.clusterMsg == nil || !l.nodesUnchanged(ix.nodes) || now.Sub(ix.built) > nodeAddrMaxAge {
		l.indexNodeAddrs(now)
	}
	return ix
}
