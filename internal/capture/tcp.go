package capture

import (
	"bytes"
	"net/netip"
	"sort"
	"time"

	"github.com/google/gopacket/layers"
)

// Conn is one reassembled TCP connection.
type Conn struct {
	// Client is the side that sent the SYN. When the SYN was not
	// captured, the side whose port is a PBS daemon port (15001–15004) is
	// taken as the server, else the first sender is the client.
	Client, Server netip.AddrPort
	SYN            bool      // the opening SYN was captured
	Start, End     time.Time // first and last frame of the connection
	FirstFrame     int       // 1-based frame number of the first frame
	ClientFIN      bool      // the client sent FIN
	ServerFIN      bool      // the server sent FIN
	RST            bool      // either side sent RST

	// Chunks is the payload in stream order for each direction, in the
	// order the data was first captured. Retransmitted bytes appear once.
	Chunks []Chunk

	// Missing counts bytes never captured (sequence gaps), per direction
	// (client to server, server to client).
	MissingC2S, MissingS2C int64

	dir [2]halfConn // 0: client to server, 1: server to client
}

// Chunk is contiguous payload one side sent, as captured in one segment.
type Chunk struct {
	Time       time.Time
	Frame      int   // 1-based frame number of the segment
	FromClient bool  // sent by the client
	Offset     int64 // offset of Data in that direction's byte stream
	Data       []byte
}

// Stream returns the whole byte stream one side sent.
func (c *Conn) Stream(fromClient bool) []byte {
	var b []byte
	for _, ch := range c.Chunks {
		if ch.FromClient == fromClient {
			b = append(b, ch.Data...)
		}
	}
	return b
}

// Turns returns the chunks with adjacent chunks of the same direction
// merged; each turn keeps the time, frame and offset of its first chunk.
// Chunks separated by a sequence gap are not merged.
func (c *Conn) Turns() []Chunk {
	var out []Chunk
	for _, ch := range c.Chunks {
		if n := len(out); n > 0 && out[n-1].FromClient == ch.FromClient &&
			out[n-1].Offset+int64(len(out[n-1].Data)) == ch.Offset {
			out[n-1].Data = append(out[n-1].Data, ch.Data...)
			continue
		}
		ch.Data = bytes.Clone(ch.Data)
		out = append(out, ch)
	}
	return out
}

// halfConn is the reassembly state of one direction.
type halfConn struct {
	haveBase bool
	base     uint32 // sequence number of stream offset 0
	next     int64  // next expected stream offset
	pending  []Chunk
}

type connKey struct{ a, b netip.AddrPort }

func keyOf(src, dst netip.AddrPort) connKey {
	if src.Compare(dst) < 0 {
		return connKey{src, dst}
	}
	return connKey{dst, src}
}

// assembler groups TCP segments into connections.
type assembler struct {
	open  map[connKey]*Conn
	conns []*Conn
}

func newAssembler() *assembler {
	return &assembler{open: make(map[connKey]*Conn)}
}

func isDaemonPort(p uint16) bool { return p >= 15001 && p <= 15004 }

func (a *assembler) add(frame int, ts time.Time, src, dst netip.AddrPort, t *layers.TCP) {
	key := keyOf(src, dst)
	c := a.open[key]
	synOnly := t.SYN && !t.ACK
	if c != nil && synOnly {
		// A new SYN on a known 4-tuple starts a new connection unless it
		// retransmits the SYN that opened this one.
		h := &c.dir[0]
		if !(c.SYN && src == c.Client && h.haveBase && h.base == t.Seq+1) {
			c = nil
		}
	}
	if c == nil {
		c = &Conn{Start: ts, FirstFrame: frame}
		switch {
		case t.SYN && !t.ACK:
			c.Client, c.Server, c.SYN = src, dst, true
		case t.SYN && t.ACK:
			c.Client, c.Server = dst, src
		case isDaemonPort(src.Port()) && !isDaemonPort(dst.Port()):
			c.Client, c.Server = dst, src
		default:
			c.Client, c.Server = src, dst
		}
		a.open[key] = c
		a.conns = append(a.conns, c)
	}
	c.End = ts
	fromClient := src == c.Client
	d := 1
	if fromClient {
		d = 0
	}
	h := &c.dir[d]
	if t.SYN {
		if !h.haveBase {
			h.haveBase, h.base = true, t.Seq+1
		}
		return
	}
	if t.RST {
		c.RST = true
	}
	if t.FIN {
		if fromClient {
			c.ClientFIN = true
		} else {
			c.ServerFIN = true
		}
	}
	if len(t.Payload) == 0 {
		return
	}
	if !h.haveBase {
		h.haveBase, h.base = true, t.Seq
	}
	off := int64(int32(t.Seq - h.base))
	ch := Chunk{Time: ts, Frame: frame, FromClient: fromClient, Offset: off, Data: bytes.Clone(t.Payload)}
	c.deliver(h, ch)
}

// deliver appends the in-order part of ch and any pending chunks it
// completes; data beyond a gap waits in pending.
func (c *Conn) deliver(h *halfConn, ch Chunk) {
	end := ch.Offset + int64(len(ch.Data))
	switch {
	case end <= h.next:
		return // retransmission of delivered data
	case ch.Offset > h.next:
		h.pending = append(h.pending, ch)
		return
	}
	ch.Data = ch.Data[h.next-ch.Offset:]
	ch.Offset = h.next
	c.Chunks = append(c.Chunks, ch)
	h.next = end
	for {
		progressed := false
		for i := 0; i < len(h.pending); i++ {
			p := h.pending[i]
			if p.Offset > h.next {
				continue
			}
			h.pending = append(h.pending[:i], h.pending[i+1:]...)
			i--
			if pend := p.Offset + int64(len(p.Data)); pend > h.next {
				p.Data = p.Data[h.next-p.Offset:]
				p.Offset = h.next
				c.Chunks = append(c.Chunks, p)
				h.next = pend
				progressed = true
			}
		}
		if !progressed {
			return
		}
	}
}

// flush delivers data still waiting behind a gap, recording the gap.
func (c *Conn) flush() {
	for d := range c.dir {
		h := &c.dir[d]
		for len(h.pending) > 0 {
			sort.Slice(h.pending, func(i, j int) bool { return h.pending[i].Offset < h.pending[j].Offset })
			p := h.pending[0]
			gap := p.Offset - h.next
			if d == 0 {
				c.MissingC2S += gap
			} else {
				c.MissingS2C += gap
			}
			h.next = p.Offset
			h.pending = h.pending[1:]
			c.deliver(h, p)
		}
	}
}

func (a *assembler) finish() []*Conn {
	for _, c := range a.conns {
		c.flush()
	}
	return a.conns
}
