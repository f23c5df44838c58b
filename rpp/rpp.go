// Package rpp implements the packet format of RPP, the reliable-packet
// protocol TORQUE runs over UDP for the IS (MOM ↔ server), IM (MOM ↔ MOM)
// and RM (resource monitor) protocols.
//
// Every RPP datagram is a payload followed by a 26-character trailer of
// upper-case hexadecimal digits: the packet type (2 digits), the stream id
// (8), the sequence number (8) and a CRC (8). The CRC is the POSIX cksum
// of the payload and the first 18 trailer characters. A message is zero or
// more DATA packets of exactly MaxPayload bytes followed by one EOD packet.
//
// Parse and Packet.Append read and build datagrams, Fragments splits a
// message into packets, and Assembler joins observed packets into
// messages for a passive observer (a protocol dissector); Endpoint and
// Stream run the protocol itself.
package rpp

import (
	"errors"
	"fmt"
)

// Packet types, named as the protocol names them.
const (
	RPP_ACK     Type = 1 // acknowledges the packet whose sequence is in the trailer
	RPP_DATA    Type = 2 // a full fragment of a message; more follows
	RPP_EOD     Type = 3 // the last fragment of a message
	RPP_HELLO1  Type = 4 // open request
	RPP_HELLO2  Type = 5 // open reply
	RPP_GOODBYE Type = 6 // close
)

// Sizes of the datagram parts.
const (
	MaxPacket  = 4096                   // largest datagram
	TrailerLen = 26                     // type + stream + sequence + CRC, in hex digits
	MaxPayload = MaxPacket - TrailerLen // 4070: payload of a DATA packet
	crcOffset  = 18                     // CRC digits start here in the trailer
)

// Type is an RPP packet type.
type Type uint8

var typeNames = [...]string{
	RPP_ACK:     "ACK",
	RPP_DATA:    "DATA",
	RPP_EOD:     "EOD",
	RPP_HELLO1:  "HELLO1",
	RPP_HELLO2:  "HELLO2",
	RPP_GOODBYE: "GOODBYE",
}

// String returns the packet type's name ("EOD"), or "TYPE(n)" for an
// unknown value.
func (t Type) String() string {
	if t.Valid() {
		return typeNames[t]
	}
	return fmt.Sprintf("TYPE(%d)", uint8(t))
}

// Valid reports whether t is one of the six packet types.
func (t Type) Valid() bool { return t >= RPP_ACK && t <= RPP_GOODBYE }

// Packet is one RPP datagram.
//
// Stream is the receiver's index of the stream, except in HELLO1 where it
// is the sender's own index. Seq is the data sequence number for DATA, EOD,
// GOODBYE and ACK; in HELLO1 and its ACK it is the open key, in HELLO2 the
// responder's stream index.
type Packet struct {
	Type    Type
	Stream  uint32
	Seq     uint32
	Payload []byte
}

// Errors returned by Parse.
var (
	ErrShort   = errors.New("rpp: datagram shorter than the trailer")
	ErrLong    = errors.New("rpp: datagram longer than 4096 bytes")
	ErrTrailer = errors.New("rpp: trailer is not upper-case hexadecimal")
	ErrCRC     = errors.New("rpp: CRC mismatch")
	ErrType    = errors.New("rpp: unknown packet type")
	ErrPayload = errors.New("rpp: payload size not allowed for the packet type")
)

// Parse decodes a datagram and checks its CRC. It accepts exactly what
// Append produces: a trailer of upper-case hex digits, a known type, at
// most MaxPacket bytes. The returned Payload aliases b.
func Parse(b []byte) (Packet, error) {
	if len(b) > MaxPacket {
		return Packet{}, ErrLong
	}
	if len(b) < TrailerLen {
		return Packet{}, ErrShort
	}
	n := len(b) - TrailerLen
	tr := b[n:]
	typ, ok1 := hexField(tr[0:2])
	stream, ok2 := hexField(tr[2:10])
	seq, ok3 := hexField(tr[10:18])
	crc, ok4 := hexField(tr[18:26])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return Packet{}, ErrTrailer
	}
	if got := Cksum(b[:n+crcOffset]); got != crc {
		return Packet{}, fmt.Errorf("%w: trailer %08X, computed %08X", ErrCRC, crc, got)
	}
	p := Packet{Type: Type(typ), Stream: stream, Seq: seq, Payload: b[:n]}
	if !p.Type.Valid() {
		return p, fmt.Errorf("%w %d", ErrType, typ)
	}
	return p, nil
}

// Check reports whether the payload size suits the packet type: DATA
// carries exactly MaxPayload bytes, EOD at most MaxPayload, the control
// packets none. (Parse does not apply this rule.)
func (p Packet) Check() error {
	switch p.Type {
	case RPP_DATA:
		if len(p.Payload) == MaxPayload {
			return nil
		}
	case RPP_EOD:
		if len(p.Payload) <= MaxPayload {
			return nil
		}
	case RPP_ACK, RPP_HELLO1, RPP_HELLO2, RPP_GOODBYE:
		if len(p.Payload) == 0 {
			return nil
		}
	default:
		return fmt.Errorf("%w %d", ErrType, uint8(p.Type))
	}
	return fmt.Errorf("%w: %s with %d bytes", ErrPayload, p.Type, len(p.Payload))
}

// Append appends the datagram for p (payload, then the trailer with a
// freshly computed CRC) to dst.
func (p Packet) Append(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, p.Payload...)
	dst = appendHex(dst, uint32(p.Type), 2)
	dst = appendHex(dst, p.Stream, 8)
	dst = appendHex(dst, p.Seq, 8)
	return appendHex(dst, Cksum(dst[start:]), 8)
}

// Marshal returns the datagram for p.
func (p Packet) Marshal() []byte {
	return p.Append(make([]byte, 0, len(p.Payload)+TrailerLen))
}

// String describes the packet without its payload, e.g.
// "EOD stream=1 seq=0 len=17".
func (p Packet) String() string {
	return fmt.Sprintf("%s stream=%d seq=%d len=%d", p.Type, p.Stream, p.Seq, len(p.Payload))
}

const hexDigits = "0123456789ABCDEF"

func appendHex(dst []byte, v uint32, width int) []byte {
	for i := width - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(v>>(4*uint(i)))&0xF])
	}
	return dst
}

// hexField parses fixed-width upper-case hex digits.
func hexField(b []byte) (uint32, bool) {
	var v uint32
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint32(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// Fragments splits a message into the packets that carry it on stream
// with sequence numbers from seq: DATA packets of exactly MaxPayload
// bytes, then one EOD with the rest (empty if the length is a multiple of
// MaxPayload). Their payloads alias msg.
func Fragments(stream, seq uint32, msg []byte) []Packet {
	pkts := make([]Packet, 0, len(msg)/MaxPayload+1)
	for len(msg) >= MaxPayload {
		pkts = append(pkts, Packet{Type: RPP_DATA, Stream: stream, Seq: seq, Payload: msg[:MaxPayload]})
		msg = msg[MaxPayload:]
		seq++
	}
	return append(pkts, Packet{Type: RPP_EOD, Stream: stream, Seq: seq, Payload: msg})
}
