// Package momis is pbs_server's side of the MOMs' IS streams (spec 10):
// the RPP endpoint on the server's UDP port, the stream each node's MOM
// reports on (IS_HELLO, IS_UPDATE, IS_STATUS), the server's pings to the
// MOMs of down nodes, the node address list (IS_CLUSTER_ADDRS) and the
// check that marks silent nodes down.
//
// The link knows the server's node table only through the narrow Nodes
// interface: it reads the node list, changes a node's state bits, hands
// over each status report and learns node_check_rate. It never holds
// its own lock while calling Nodes.
package momis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopbs/internal/logline"
	"gopbs/momproto"
	"gopbs/rpp"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// Nodes is what the IS link needs of the server's node table. Its
// methods take the server's lock themselves.
type Nodes interface {
	// Same reports whether the node list is still nodes (the same nodes
	// in the same order).
	Same(nodes []*state.Node) bool
	// List returns a copy of the node list and the nodes' names.
	List() (nodes []*state.Node, names []string)
	// Count returns the number of nodes.
	Count() int
	// Down returns the names of the nodes marked down.
	Down() []string
	// SetState changes the state bits of node name.
	SetState(name string, f func(int) int)
	// Status applies node name's IS_STATUS items, status being the
	// node's status attribute made of them (spec 10 §5.3). It returns
	// the ids of jobs the MOM holds that the server does not run there
	// (mom_job_sync).
	Status(name, status string, items []string) (stray []string)
	// DeleteStray has job id deleted at the MOM of node name.
	DeleteStray(name, id string)
	// CheckRate returns node_check_rate in seconds.
	CheckRate() int64
	// Silent marks node name down: its MOM has not reported for rate
	// seconds.
	Silent(name string, rate int64)
	// Resolve returns the addresses of a node's host name.
	Resolve(name string) []netip.Addr
	// Now returns the server's clock.
	Now() time.Time
}

// isReadBuffer is the receive buffer of the server's IS socket: 10,000
// MOMs saying hello within seconds acknowledge their 110 KB node lists
// with tens of thousands of datagrams a second, which the default buffer
// dropped by the hundred thousand (each loss costs a MOM a retransmission
// interval).
const isReadBuffer = 16 << 20

// Link is the server's side of the MOMs' IS streams.
type Link struct {
	nodes  Nodes
	log    *pbslog.Logger
	rmPort int             // the MOMs' resource manager port, where pings go
	done   <-chan struct{} // closed when the server stops
	ep     *rpp.Endpoint   // nil until Start, or if the port could not be bound

	// PingDelay is when, after Start, down nodes are sent IS_HELLO.
	PingDelay time.Duration
	// AddrsDelay is clusterAddrsDelay (tests shorten it).
	AddrsDelay time.Duration
	// PingAnswerWait is pingAnswerWait (tests change it).
	PingAnswerWait time.Duration

	mu      sync.Mutex
	streams map[string]*rpp.Stream // node name → its MOM's IS stream
	pings   map[string]*rpp.Stream // node name → the server's ping to its MOM, not answered yet
	pingAt  map[string]time.Time   // node name → when its ping was sent
	heard   map[string]time.Time   // node name → last IS_STATUS
	// addrsDue is set while a re-send of IS_CLUSTER_ADDRS to every
	// node is scheduled (announceCluster); addrsNotBefore is the
	// earliest time of the next one (clusterAddrsRate), addrsSent which
	// list each stream holds.
	addrsDue       bool
	addrsNotBefore time.Time
	addrsSent      addrsSent

	// nodeAddrs finds the node of an IS stream's address (nodeByAddr).
	nodeAddrs nodeAddrIndex
	// maxStreams is the endpoint's stream bound last set (SizeStreams;
	// used by Start and the timer goroutine only).
	maxStreams int
}

// New returns the IS link of a server whose node table is nodes, logging
// to log; pings go to the MOMs' port rmPort. Its work ends when done is
// closed.
func New(nodes Nodes, log *pbslog.Logger, rmPort int, done <-chan struct{}) *Link {
	return &Link{
		nodes:          nodes,
		log:            log,
		rmPort:         rmPort,
		done:           done,
		PingDelay:      5 * time.Second,
		AddrsDelay:     clusterAddrsDelay,
		PingAnswerWait: pingAnswerWait,
		streams:        make(map[string]*rpp.Stream),
		pings:          make(map[string]*rpp.Stream),
		pingAt:         make(map[string]time.Time),
		heard:          make(map[string]time.Time),
	}
}

// Start opens the IS endpoint on UDP port port and accepts the MOMs'
// streams; PingDelay later it pings the MOMs of down nodes. A port that
// cannot be bound is logged, and the link then serves no MOM.
func (l *Link) Start(port int) {
	pc, err := net.ListenPacket("udp", ":"+strconv.Itoa(port))
	if err != nil {
		l.logError("start_rpp", fmt.Sprintf("cannot bind IS port %d: %v", port, err))
		return
	}
	l.ep = rpp.NewEndpoint(pc, &rpp.Options{ReadBuffer: isReadBuffer})
	l.SizeStreams()
	go l.acceptIS()
}

// Stop closes the MOMs' IS streams (they see GOODBYE and say hello again
// to the next server, capture 102) and the endpoint.
func (l *Link) Stop() {
	if l == nil || l.ep == nil {
		return
	}
	l.mu.Lock()
	streams := make([]*rpp.Stream, 0, len(l.streams))
	for _, st := range l.streams {
		streams = append(streams, st)
	}
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	for _, st := range streams {
		st.Close()
	}
	for _, st := range streams {
		st.Flush(ctx)
	}
	l.ep.Close()
}

// Tick runs every second: it bounds the endpoint's streams by the
// number of nodes and marks down the nodes whose MOM has been silent for
// node_check_rate seconds.
func (l *Link) Tick() {
	l.SizeStreams()
	l.checkNodes()
}

// SizeStreams bounds the IS endpoint's streams by the number of nodes:
// each node's MOM keeps a stream open to the server and the server may
// open one to it, with rpp.DefaultMaxStreams to spare for the
// scheduler's and clients' streams (resource queries) and for floods.
// Called at start and by the one-second timer, which sees created nodes
// within a second (a MOM's refused HELLO1 is retransmitted).
func (l *Link) SizeStreams() {
	if l.ep == nil {
		return
	}
	n := rpp.DefaultMaxStreams + 2*l.nodes.Count()
	if n != l.maxStreams {
		l.ep.SetMaxStreams(n)
		l.maxStreams = n
	}
}

// logError writes a LOG_ERROR line (spec 12 §13.2).
func (l *Link) logError(fn, msg string) {
	l.log.Logf(1, "Svr", "PBS_Server", "LOG_ERROR::%s, %s", fn, msg)
}

// DefaultNodeCheckRate is node_check_rate's default (spec 10 §5.6).
const DefaultNodeCheckRate = 150

// acceptIS accepts the IS streams MOMs open to the server.
func (l *Link) acceptIS() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-l.done
		cancel()
	}()
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(l.PingDelay):
			l.pingNodes(ctx)
		}
	}()
	for {
		st, err := l.ep.Accept(ctx)
		if err != nil {
			return
		}
		go l.serveIS(ctx, st)
	}
}

// serveIS reads the IS messages of a stream a MOM opened.
func (l *Link) serveIS(ctx context.Context, st *rpp.Stream) {
	addr := st.RemoteAddr().Addr()
	name := l.nodeByAddr(addr)
	if name == "" {
		l.logError("is_request", "bad attempt to connect from "+addr.String()+" (address not trusted - check entry in server_priv/nodes)")
		st.Close()
		return
	}
	l.serveNodeIS(ctx, st, name)
}

// pingNodes says IS_HELLO to the MOM of every node that is down and has
// no IS stream, as the server does 5 s after it starts (spec 10 §5.6).
func (l *Link) pingNodes(ctx context.Context) {
	names := l.nodes.Down()
	l.mu.Lock()
	todo := names[:0]
	for _, name := range names {
		if l.streams[name] == nil {
			todo = append(todo, name)
		}
	}
	l.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	l.log.Logf(logline.EventSched, logline.ClassRequest, "ping_nodes", "ping attempting to contact %d nodes", len(todo))
	for _, name := range todo {
		l.PingNode(ctx, name)
	}
}

// PingNode opens a stream to the MOM of node name and says IS_HELLO on
// it. The stream becomes the node's IS stream only when the MOM speaks
// on it (serveNodeIS): a MOM that opened its own stream meanwhile, the
// two opens crossing between the same two UDP ports, keeps the stream it
// speaks on, whichever that is.
func (l *Link) PingNode(ctx context.Context, name string) {
	addrs := l.nodes.Resolve(name)
	if len(addrs) == 0 {
		return
	}
	// The endpoint's retransmission defaults, not the 2 s × 2 retries
	// TORQUE sets while its ping loop runs (spec 10 §2.4): a MOM answers
	// the ping and carries on over its stream, so a ping given up early
	// under load (thousands of MOMs at once after a restart) would leave
	// that MOM talking to a stream the server no longer knows.
	st, err := l.ep.Open(netip.AddrPortFrom(addrs[0], uint16(l.rmPort)))
	if err != nil {
		return
	}
	if err := st.Send((&momproto.ISMessage{Version: momproto.IS_PROTOCOL_VER, Command: momproto.IS_HELLO}).Append(nil)); err != nil {
		st.Close()
		return
	}
	l.log.Logf(logline.EventSched, logline.ClassRequest, "ping_nodes", "successful ping to node %s (stream %d)", name, st.Index())
	l.mu.Lock()
	if old := l.pings[name]; old != nil {
		old.Close()
	}
	l.pings[name] = st
	l.pingAt[name] = time.Now()
	l.mu.Unlock()
	go l.serveNodeIS(ctx, st, name)
}

// serveNodeIS reads the IS messages of a stream to node name's MOM, one
// the MOM opened or the server's ping. The stream on which the MOM last
// spoke is the node's stream (l.streams): a message on another one
// makes that one the node's and closes the previous stream, whose end
// then says nothing about the node. Only the end of the node's stream
// marks it down.
func (l *Link) serveNodeIS(ctx context.Context, st *rpp.Stream, name string) {
	defer func() {
		l.mu.Lock()
		if l.streams[name] == st {
			delete(l.streams, name)
		}
		if l.pings[name] == st {
			delete(l.pings, name)
			delete(l.pingAt, name)
		}
		l.addrsSent.forget(st)
		l.mu.Unlock()
	}()
	for {
		b, err := st.Recv(ctx)
		if err != nil {
			// A stream the server closed itself (shutdown, or replaced)
			// ends without a word, as TORQUE logs nothing for its
			// nodes when it shuts down.
			if ctx.Err() != nil || errors.Is(err, rpp.ErrClosed) || !l.nodeStream(name, st) || l.movedToPing(ctx, name, st) {
				st.Close()
				return
			}
			why := "End of File"
			if !errors.Is(err, io.EOF) {
				why = "Premature end of message"
			}
			l.logError("stream_eof", "connection to "+name+" is bad, remote service may be down, message may be corrupt, or connection may have been dropped remotely ("+why+").  setting node state to down")
			l.setNodeState(name, func(st int) int { return st | state.NodeStateDown })
			st.Close()
			return
		}
		l.adoptStream(name, st)
		msg, err := momproto.DecodeIS(b)
		if err != nil {
			l.logError("is_request", "bad IS message from "+name+": "+err.Error())
			l.setNodeState(name, func(st int) int { return st | state.NodeStateDown })
			st.Close()
			return
		}
		switch msg.Command {
		case momproto.IS_NULL:
		case momproto.IS_HELLO:
			l.log.Logf(logline.EventSystem, logline.ClassServer, "is_request", "HELLO received from %s", name)
			// The MOM is up; the node stays offline until its first
			// status (nodeStatus).
			l.setNodeState(name, func(st int) int { return st &^ state.NodeStateDown })
			msg, gen := l.clusterAddrsMsg()
			if err := st.Send(msg); err == nil {
				l.log.Logf(logline.EventSystem, logline.ClassServer, "send_cluster_addrs", "successful addr to node %s", name)
				l.mu.Lock()
				if l.streams[name] == st {
					l.addrsSent.note(st, gen)
				}
				l.mu.Unlock()
			}
			l.announceCluster(gen)
		case momproto.IS_UPDATE:
			bits := int(msg.State)
			l.setNodeState(name, func(st int) int {
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
			l.nodeStatus(name, msg.Status)
			l.dropPing(name, st)
		case momproto.IS_GPU_STATUS:
		default:
			l.logError("is_request", "unknown command from "+name)
			l.setNodeState(name, func(st int) int { return st | state.NodeStateUnknown })
			st.Close()
			return
		}
	}
}

// nodeStream reports whether st is node name's IS stream.
func (l *Link) nodeStream(name string, st *rpp.Stream) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.streams[name] == st
}

// pingSwitchWait bounds how long the end of a node's stream waits for
// the MOM's answer to a pending ping before it marks the node down.
const pingSwitchWait = 5 * time.Second

// movedToPing reports whether node name's MOM, whose stream st ended,
// went over to the server's ping: pbs_mom answers the ping's IS_HELLO
// and then closes its own stream, and the server may read the two in
// either order. While a ping to the node is pending it waits up to
// pingSwitchWait for the answer.
func (l *Link) movedToPing(ctx context.Context, name string, st *rpp.Stream) bool {
	deadline := time.Now().Add(pingSwitchWait)
	for {
		l.mu.Lock()
		moved, pending := l.streams[name] != st, l.pings[name] != nil
		l.mu.Unlock()
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
func (l *Link) adoptStream(name string, st *rpp.Stream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.streams[name]
	if old == st {
		return
	}
	l.streams[name] = st
	if l.pings[name] == st {
		delete(l.pings, name)
		delete(l.pingAt, name)
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
// l.PingAnswerWait for an answer.
func (l *Link) dropPing(name string, st *rpp.Stream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.pings[name]; p != nil && p != st && time.Since(l.pingAt[name]) >= l.PingAnswerWait {
		delete(l.pings, name)
		delete(l.pingAt, name)
		p.Close()
	}
}

// setNodeState changes a node's state bits.
func (l *Link) setNodeState(name string, f func(int) int) { l.nodes.SetState(name, f) }

// nodeStatus stores an IS_STATUS list as the node's status attribute
// (reversed, rectime first, spec 10 §5.3) and applies its state.
func (l *Link) nodeStatus(name string, items []string) {
	now := l.nodes.Now()
	l.mu.Lock()
	l.heard[name] = now
	l.mu.Unlock()
	list := []string{"rectime=" + strconv.FormatInt(now.Unix(), 10)}
	for i := len(items) - 1; i >= 0; i-- {
		for _, part := range strings.Split(items[i], ",") {
			list = append(list, strings.TrimRight(part, " "))
		}
	}
	stray := l.nodes.Status(name, strings.Join(list, ","), items)
	// jobs the MOM holds but the server does not run there (mom_job_sync)
	for _, id := range stray {
		go l.nodes.DeleteStray(name, id)
	}
}

// checkNodes marks nodes down whose MOM has not reported for
// node_check_rate seconds.
func (l *Link) checkNodes() {
	now := l.nodes.Now()
	rate := l.nodes.CheckRate()
	if rate <= 0 {
		rate = DefaultNodeCheckRate
	}
	limit := time.Duration(rate) * time.Second
	l.mu.Lock()
	var stale []string
	for name, t := range l.heard {
		if now.Sub(t) > limit {
			stale = append(stale, name)
			delete(l.heard, name)
		}
	}
	l.mu.Unlock()
	for _, name := range stale {
		l.nodes.Silent(name, rate)
	}
}
