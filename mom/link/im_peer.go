package link

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/logline"
	"gopbs/momproto"
	"gopbs/rpp"
)

// IM streams are per peer, not per job. A MOM opens all its IM streams
// from one RPP endpoint, and a MOM that gets a HELLO1 with a new key from
// an address and port it has streams from takes it for a restart of that
// peer and discards them (spec 10 §2.3): a stream per job would make two
// jobs with a common sister knock out each other's stream. So this MOM
// keeps one stream to each other MOM (address and port), which every job
// linked to that MOM uses, as mother superior or as a sister relaying its
// tasks' TM requests; requests and replies are told apart by the job id,
// event and task the IM header carries (spec 10 §11). The stream is
// closed (GOODBYE) when the last job using it lets it go, as the captures
// show at a job's end (105, 106); a stream that died or stopped answering
// is replaced by one new stream for all its jobs (relinkPeer).

// relinkAge is the age under which a live stream is not replaced.
const relinkAge = time.Second

// imPeer is the IM stream this MOM opened to another MOM.
type imPeer struct {
	addr   netip.AddrPort
	stream *rpp.Stream
	opened time.Time

	mu       sync.Mutex
	pending  map[peerKey][]*imCall
	users    map[*sisterLink]*msJob // the job links using the stream
	dead     error
	replaced bool // a new stream took over (relinkPeer): its end is no failure
	answered bool // a reply came on this stream
}

// peerKey matches a reply to its request: replies repeat the request's
// job, event and originating task (TM-relayed requests carry the task's
// own event numbers, which may equal the MOM's).
type peerKey struct {
	job         string
	event, task int
}

// alive reports whether a reply came on the stream and it has not died.
func (p *imPeer) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answered && p.dead == nil
}

// isDead reports whether the stream died.
func (p *imPeer) isDead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dead != nil
}

// openPeer opens a stream to addr and starts its reader. The caller holds
// m.mn.mu and enters the result in m.mn.peers.
func (m *Mom) openPeer(addr netip.AddrPort) (*imPeer, error) {
	st, err := m.mn.ep.Open(addr)
	if err != nil {
		return nil, err
	}
	p := &imPeer{addr: addr, stream: st, opened: time.Now(), pending: map[peerKey][]*imCall{}, users: map[*sisterLink]*msJob{}}
	m.goFunc(func() { m.readPeer(p) })
	return p, nil
}

// attach makes sl, a link of job mj, use the stream to addr, opening one
// when there is none or when the one there died (which then is replaced
// for all its jobs).
func (m *Mom) attach(mj *msJob, sl *sisterLink, addr netip.AddrPort) error {
	m.mn.mu.Lock()
	defer m.mn.mu.Unlock()
	p := m.mn.peers[addr]
	switch {
	case p == nil:
		np, err := m.openPeer(addr)
		if err != nil {
			return err
		}
		if m.mn.peers == nil {
			m.mn.peers = map[netip.AddrPort]*imPeer{}
		}
		m.mn.peers[addr] = np
		p = np
	case p.isDead():
		np, err := m.replacePeer(p)
		if err != nil {
			return err
		}
		p = np
	}
	p.mu.Lock()
	p.users[sl] = mj
	p.mu.Unlock()
	sl.mu.Lock()
	sl.peer = p
	sl.mu.Unlock()
	return nil
}

// replacePeer opens a new stream to old's peer and moves old's users to
// it; old is abandoned without a GOODBYE, which would land on the new
// stream at the peer (rpp.Stream.Abandon), and its pending calls fail.
// The caller holds m.mn.mu; old is m.mn.peers' entry.
func (m *Mom) replacePeer(old *imPeer) (*imPeer, error) {
	np, err := m.openPeer(old.addr)
	if err != nil {
		return nil, err
	}
	old.mu.Lock()
	old.replaced = true
	users := old.users
	old.users = map[*sisterLink]*msJob{}
	old.mu.Unlock()
	np.users = users
	for sl := range users {
		sl.mu.Lock()
		sl.peer = np
		sl.mu.Unlock()
	}
	m.mn.peers[old.addr] = np
	old.stream.Abandon()
	return np, nil
}

// relinkPeer replaces stale, a stream that died or stopped answering, by
// a new one for all the jobs using it, and returns the new one. When
// stale was replaced already (another job's relink), the stream that
// replaced it is returned; nil when no job uses the peer any more. A
// live stream opened less than relinkAge ago is returned as it is: it
// gets its chance to be answered, rather than being replaced under the
// requests of the job that opened it by another's relink.
func (m *Mom) relinkPeer(stale *imPeer) *imPeer {
	m.mn.mu.Lock()
	defer m.mn.mu.Unlock()
	cur := m.mn.peers[stale.addr]
	if cur != stale || (!stale.isDead() && time.Since(stale.opened) < relinkAge) {
		return cur
	}
	np, err := m.replacePeer(stale)
	if err != nil {
		m.logErr("im_request", err, "re-open stream to "+stale.addr.String())
		return nil
	}
	return np
}

// detach lets go of sl's stream: the last link using a stream closes it
// with GOODBYE.
func (m *Mom) detach(sl *sisterLink) {
	m.mn.mu.Lock() // first: replacePeer moves links under it
	sl.mu.Lock()
	p := sl.peer
	sl.mu.Unlock()
	if p == nil {
		m.mn.mu.Unlock()
		return
	}
	p.mu.Lock()
	delete(p.users, sl)
	last := len(p.users) == 0
	p.mu.Unlock()
	current := m.mn.peers[p.addr] == p
	if last && current {
		delete(m.mn.peers, p.addr)
	}
	m.mn.mu.Unlock()
	if last && current {
		p.stream.Close()
	}
}

// readPeer delivers the replies of a stream to their callers. When the
// stream dies (and was not replaced), every job using it hears of it: a
// sister failure aborts a job, as in TORQUE, unless the sister comes
// back (sisterLost).
func (m *Mom) readPeer(p *imPeer) {
	for {
		b, err := p.stream.Recv(m.ctx)
		if err != nil {
			m.peerDied(p, err)
			return
		}
		msg, err := momproto.DecodeIM(b, func(h *momproto.IMHeader) int {
			p.mu.Lock()
			defer p.mu.Unlock()
			if calls := p.pending[peerKey{h.JobID, h.Event, h.FromTask}]; len(calls) > 0 {
				return calls[0].cmd
			}
			return -1
		})
		if err != nil {
			m.logErr("im_request", err, "reply from "+p.addr.String())
			continue
		}
		if msg.Command != momproto.IM_ALL_OKAY && msg.Command != momproto.IM_ERROR {
			// The peer's own request on this MOM's stream: not
			// supported (the peer opens its own).
			_ = p.stream.Send(imError(msg, batchreq.PBSE_NOSUP).Append(nil))
			continue
		}
		key := peerKey{msg.JobID, msg.Event, msg.FromTask}
		p.mu.Lock()
		p.answered = true
		calls := p.pending[key]
		var call *imCall
		if len(calls) > 0 {
			call = calls[0]
			if len(calls) == 1 {
				delete(p.pending, key)
			} else {
				p.pending[key] = calls[1:]
			}
		}
		p.mu.Unlock()
		if call == nil {
			m.log.Job(logline.EventDebug, msg.JobID, fmt.Sprintf("unexpected IM reply event %d from %v", msg.Event, p.addr))
			continue
		}
		call.reply <- msg
	}
}

// peerDied fails the pending calls of a stream that ended and, unless it
// was replaced, tells the jobs using it.
func (m *Mom) peerDied(p *imPeer, err error) {
	p.mu.Lock()
	if errors.Is(err, io.EOF) {
		err = errSisterGone
	}
	p.dead = fmt.Errorf("%w: %w", errSisterGone, err)
	for _, calls := range p.pending {
		for _, c := range calls {
			close(c.reply)
		}
	}
	p.pending = map[peerKey][]*imCall{}
	replaced := p.replaced
	users := make(map[*sisterLink]*msJob, len(p.users))
	for sl, mj := range p.users {
		users[sl] = mj
	}
	p.mu.Unlock()
	if replaced || m.ctx.Err() != nil {
		return
	}
	for sl, mj := range users {
		mj.mu.Lock()
		ended := mj.ended
		mj.mu.Unlock()
		if !ended && !mj.relayOnly {
			m.goFunc(func() { m.sisterLost(mj, sl, p, err) })
		}
	}
}
