package rpp

import "net/netip"

// Assembler joins the DATA and EOD fragments of observed RPP packets into
// messages and recognises retransmitted packets. It follows the packets
// of any number of host pairs and streams; it keeps no timers and sends
// nothing, so it suits a passive observer (a protocol dissector) as well
// as a receiver. The zero value is ready to use.
type Assembler struct {
	streams map[streamKey]*inbound
	hellos  map[helloKey]Packet
}

// Message is one complete RPP message.
type Message struct {
	Stream    uint32 // stream field of its packets (the receiver's index)
	FirstSeq  uint32 // sequence number of its first fragment
	Fragments int    // number of DATA/EOD packets
	Data      []byte
}

// Result says what one packet meant to the Assembler.
type Result struct {
	// Retransmit is set for a DATA, EOD or GOODBYE whose sequence number
	// was already seen, and for a HELLO1/HELLO2 identical to the last one
	// between the same pair of endpoints. Its payload was ignored.
	Retransmit bool
	// Lost counts packets skipped over: the sequence number jumped ahead
	// of the expected one (a partly received message is then dropped).
	Lost uint32
	// Message is the message an EOD completed, else nil.
	Message *Message
}

type streamKey struct {
	from, to netip.AddrPort
	stream   uint32
}

type helloKey struct {
	from, to netip.AddrPort
	typ      Type
}

type inbound struct {
	next     uint32 // expected sequence number
	firstSeq uint32
	frags    int
	buf      []byte
}

// Add processes packet p, sent from one endpoint to another.
func (a *Assembler) Add(from, to netip.AddrPort, p Packet) Result {
	if a.streams == nil {
		a.streams = make(map[streamKey]*inbound)
		a.hellos = make(map[helloKey]Packet)
	}
	switch p.Type {
	case RPP_HELLO1, RPP_HELLO2:
		hk := helloKey{from, to, p.Type}
		if last, ok := a.hellos[hk]; ok && last.Stream == p.Stream && last.Seq == p.Seq {
			return Result{Retransmit: true}
		}
		a.hellos[hk] = Packet{Type: p.Type, Stream: p.Stream, Seq: p.Seq}
		// A new stream starts, so its sequence numbers restart at 0.
		// HELLO1 names the initiator's index, which the responder's
		// data will carry; HELLO2 names both indexes.
		if p.Type == RPP_HELLO1 {
			delete(a.streams, streamKey{to, from, p.Stream})
			delete(a.hellos, helloKey{to, from, RPP_HELLO2}) // a new answer is due
		} else {
			delete(a.streams, streamKey{from, to, p.Stream})
			delete(a.streams, streamKey{to, from, p.Seq})
		}
		return Result{}
	case RPP_DATA, RPP_EOD, RPP_GOODBYE:
	default:
		return Result{}
	}
	k := streamKey{from, to, p.Stream}
	in := a.streams[k]
	if in == nil {
		in = &inbound{next: p.Seq}
		a.streams[k] = in
	}
	var res Result
	if d := int32(p.Seq - in.next); d < 0 {
		return Result{Retransmit: true}
	} else if d > 0 {
		res.Lost = uint32(d)
		in.buf, in.frags = nil, 0
	}
	in.next = p.Seq + 1
	if p.Type == RPP_GOODBYE {
		in.buf, in.frags = nil, 0
		return res
	}
	if in.frags == 0 {
		in.firstSeq = p.Seq
	}
	in.frags++
	in.buf = append(in.buf, p.Payload...)
	if p.Type == RPP_EOD {
		res.Message = &Message{Stream: p.Stream, FirstSeq: in.firstSeq, Fragments: in.frags, Data: in.buf}
		in.buf, in.frags = nil, 0
	}
	return res
}
