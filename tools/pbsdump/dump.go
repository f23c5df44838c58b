package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
	"gopbs/momproto"
	"gopbs/rpp"
)

// Message is one line of output: a decoded protocol message, an RPP
// packet, a chunk of raw stream data, or a region that could not be
// decoded.
type Message struct {
	File   string
	Time   time.Time
	Src    netip.AddrPort
	Dst    netip.AddrPort
	Proto  string // batch, sched, tm, rm, rpp, raw, tcp
	Kind   string // request, reply, command, packet, data, undecoded
	Name   string // e.g. StatusJob, SCH_SCHEDULE_NEW, EOD, interactive
	Number int    // request type, command or packet type; -1 if none
	User   string // batch requests: the header user
	Fields []Field
	// Detail is the decoded value (a batch request or reply, an IS, RM,
	// IM or TM message) for -v and -json; nil for packets without a
	// message and raw data.
	Detail any
	Offset int64  // offset of the message in its stream or datagram
	Size   int    // bytes the message took
	Err    string // why the bytes were not decoded, or a warning
	// Undecoded counts the bytes this entry reports as not decoded.
	Undecoded int
	seq       int // tie-breaker keeping the decode order for equal times
}

// Field is one key=value item of a line.
type Field struct {
	Key   string
	Value string
}

// Stats are the counters of the -summary line.
type Stats struct {
	Messages       int // every output entry except undecoded regions
	TCPMessages    int // decoded DIS messages on TCP (batch, TM, RM)
	RPPPackets     int // UDP datagrams (RPP packets)
	SchedCommands  int // 4-byte scheduler commands
	UndecodedBytes int
	Errors         int
}

// String formats the summary line.
func (s Stats) String() string {
	return fmt.Sprintf("messages=%d tcp_messages=%d rpp_packets=%d sched_commands=%d undecoded_bytes=%d errors=%d",
		s.Messages, s.TCPMessages, s.RPPPackets, s.SchedCommands, s.UndecodedBytes, s.Errors)
}

// add accumulates the counters of one entry.
func (s *Stats) add(m *Message) {
	s.UndecodedBytes += m.Undecoded
	if m.Err != "" {
		s.Errors++
	}
	if m.Kind == "undecoded" {
		return
	}
	s.Messages++
	switch {
	case m.Proto == "rpp":
		s.RPPPackets++
	case m.Proto == "sched" && m.Kind == "command":
		s.SchedCommands++
	case m.Proto == "batch" || m.Proto == "sched" || m.Proto == "tm" || m.Proto == "rm":
		s.TCPMessages++
	}
}

// Daemon ports.
const (
	portServer = 15001
	portMom    = 15002
	portResmon = 15003
	portSched  = 15004
)

// dumper decodes one capture.
type dumper struct {
	file  string
	msgs  []*Message
	im    momproto.IMTracker
	asm   rpp.Assembler
	ports map[uint16]string // announced raw-stream ports and their use
}

// Dump decodes every message of one capture, in time order.
func Dump(c *capture.Capture) []*Message {
	d := &dumper{file: filepath.Base(c.Path), ports: make(map[uint16]string)}
	for _, dg := range c.Datagrams {
		d.datagram(dg)
	}
	var raw []*capture.Conn
	for _, conn := range c.Conns {
		if !d.conn(conn) {
			raw = append(raw, conn)
		}
	}
	// Raw streams last: their ports are announced by decoded messages.
	for _, conn := range raw {
		d.rawConn(conn)
	}
	sort.SliceStable(d.msgs, func(i, j int) bool {
		if !d.msgs[i].Time.Equal(d.msgs[j].Time) {
			return d.msgs[i].Time.Before(d.msgs[j].Time)
		}
		return d.msgs[i].seq < d.msgs[j].seq
	})
	return d.msgs
}

func (d *dumper) emit(m *Message) *Message {
	m.File = d.file
	m.seq = len(d.msgs)
	d.msgs = append(d.msgs, m)
	return m
}

// conn decodes a connection to a daemon port; it returns false for other
// connections, which are left for rawConn.
func (d *dumper) conn(conn *capture.Conn) bool {
	if conn.MissingC2S+conn.MissingS2C > 0 {
		d.emit(&Message{Time: conn.Start, Src: conn.Client, Dst: conn.Server, Proto: "tcp", Kind: "undecoded", Number: -1,
			Err: fmt.Sprintf("%d bytes missing from the capture", conn.MissingC2S+conn.MissingS2C)})
	}
	switch conn.Server.Port() {
	case portServer, portMom:
		reqs := d.batchRequests(conn, true, 0, "batch")
		d.batchReplies(conn, false, 0, "batch", reqs)
	case portSched:
		if !d.schedCommand(conn) {
			return true
		}
		reqs := d.batchRequests(conn, false, 0, "sched")
		d.batchReplies(conn, true, 4, "sched", reqs)
	case portResmon:
		d.resmon(conn)
	default:
		return false
	}
	return true
}

// chunkAt returns the time of the chunk holding byte off of one
// direction's stream.
func chunkAt(conn *capture.Conn, fromClient bool, off int64) time.Time {
	t := conn.Start
	for _, ch := range conn.Chunks {
		if ch.FromClient != fromClient {
			continue
		}
		if ch.Offset > off {
			break
		}
		t = ch.Time
	}
	return t
}

func ends(conn *capture.Conn, fromClient bool) (src, dst netip.AddrPort) {
	if fromClient {
		return conn.Client, conn.Server
	}
	return conn.Server, conn.Client
}

// undecoded reports the rest of a stream, from off, as not decoded.
func (d *dumper) undecoded(conn *capture.Conn, fromClient bool, proto string, off int64, n int, err error) {
	src, dst := ends(conn, fromClient)
	d.emit(&Message{Time: chunkAt(conn, fromClient, off), Src: src, Dst: dst, Proto: proto, Kind: "undecoded",
		Number: -1, Offset: off, Size: n, Undecoded: n, Err: err.Error()})
}

// decodeAll decodes consecutive items of a stream from offset start;
// decode returns the item and the bytes it took.
func decodeAll(stream []byte, start int, decode func(b []byte) (n int, err error)) (off int, err error) {
	for off = start; off < len(stream); {
		n, err := decode(stream[off:])
		if err != nil {
			return off, err
		}
		off += n
	}
	return off, nil
}

// readDIS runs read on a fresh dis.Reader over b and returns the bytes
// it consumed.
func readDIS[T any](b []byte, read func(*dis.Reader) (T, error)) (T, int, error) {
	r := dis.NewReader(bytes.NewReader(b))
	v, err := read(r)
	return v, int(r.Offset()), err
}

// errReencode is reported when a decoded message does not encode back to
// the captured bytes.
var errReencode = errors.New("re-encoding differs from the captured bytes")

// batchRequests decodes the batch requests one side of conn sent.
func (d *dumper) batchRequests(conn *capture.Conn, fromClient bool, start int, proto string) []*batchreq.Request {
	stream := conn.Stream(fromClient)
	src, dst := ends(conn, fromClient)
	var reqs []*batchreq.Request
	off, err := decodeAll(stream, start, func(b []byte) (int, error) {
		req, n, err := readDIS(b, batchreq.ReadAnyRequest)
		if err != nil {
			return 0, err
		}
		m := d.emit(&Message{Time: chunkAt(conn, fromClient, int64(len(stream)-len(b))), Src: src, Dst: dst,
			Proto: proto, Kind: "request", Name: batchreq.RequestName(req.Type), Number: req.Type, User: req.User,
			Detail: req, Offset: int64(len(stream) - len(b)), Size: n, Fields: requestFields(req)})
		if !bytes.Equal(req.Append(nil), b[:n]) {
			m.Err = errReencode.Error()
		}
		if req.Type != batchreq.PBS_BATCH_Disconnect {
			reqs = append(reqs, req)
		}
		d.announce(req)
		return n, nil
	})
	if err != nil {
		d.undecoded(conn, fromClient, proto, int64(off), len(stream)-off, err)
	}
	return reqs
}

// batchReplies decodes the replies one side of conn sent, pairing them
// in order with the requests of the other side.
func (d *dumper) batchReplies(conn *capture.Conn, fromClient bool, start int, proto string, reqs []*batchreq.Request) {
	stream := conn.Stream(fromClient)
	src, dst := ends(conn, fromClient)
	i := 0
	off, err := decodeAll(stream, start, func(b []byte) (int, error) {
		rep, n, err := readDIS(b, batchreq.ReadReply)
		if err != nil {
			return 0, err
		}
		name, num := "reply", -1
		if i < len(reqs) {
			name, num = batchreq.RequestName(reqs[i].Type), reqs[i].Type
		}
		i++
		m := d.emit(&Message{Time: chunkAt(conn, fromClient, int64(len(stream)-len(b))), Src: src, Dst: dst,
			Proto: proto, Kind: "reply", Name: name, Number: num, Detail: rep,
			Offset: int64(len(stream) - len(b)), Size: n, Fields: replyFields(rep)})
		if !bytes.Equal(rep.Append(nil), b[:n]) {
			m.Err = errReencode.Error()
		}
		return n, nil
	})
	if err != nil {
		d.undecoded(conn, fromClient, proto, int64(off), len(stream)-off, fmt.Errorf("batch %w", err))
	}
}

// announce records the ports a request tells a peer to connect to: the
// interactive qsub's listening port.
func (d *dumper) announce(req *batchreq.Request) {
	if qj, ok := req.Body.(*batchreq.QueueJob); ok {
		if v, ok := qj.Attrs.Get("interactive"); ok {
			if p, err := strconv.ParseUint(v, 10, 16); err == nil && p != 0 {
				d.ports[uint16(p)] = "interactive"
			}
		}
	}
}

var schedNames = map[int]string{
	batchreq.SCH_ERROR:          "SCH_ERROR",
	batchreq.SCH_SCHEDULE_NULL:  "SCH_SCHEDULE_NULL",
	batchreq.SCH_SCHEDULE_NEW:   "SCH_SCHEDULE_NEW",
	batchreq.SCH_SCHEDULE_TERM:  "SCH_SCHEDULE_TERM",
	batchreq.SCH_SCHEDULE_TIME:  "SCH_SCHEDULE_TIME",
	batchreq.SCH_SCHEDULE_RECYC: "SCH_SCHEDULE_RECYC",
	batchreq.SCH_SCHEDULE_CMD:   "SCH_SCHEDULE_CMD",
	batchreq.SCH_CONFIGURE:      "SCH_CONFIGURE",
	batchreq.SCH_QUIT:           "SCH_QUIT",
	batchreq.SCH_RULESET:        "SCH_RULESET",
	batchreq.SCH_SCHEDULE_FIRST: "SCH_SCHEDULE_FIRST",
}

// schedCommand decodes the 4-byte command that opens a scheduler
// connection; false means the stream was reported as undecoded.
func (d *dumper) schedCommand(conn *capture.Conn) bool {
	stream := conn.Stream(true)
	if len(stream) == 0 && len(conn.Stream(false)) == 0 {
		return false
	}
	if len(stream) < 4 {
		d.undecoded(conn, true, "sched", 0, len(stream), errors.New("scheduler command: fewer than 4 bytes"))
		if n := len(conn.Stream(false)); n > 0 {
			d.undecoded(conn, false, "sched", 0, n, errors.New("scheduler requests without a command"))
		}
		return false
	}
	cmd, _ := batchreq.ReadSchedCommand(bytes.NewReader(stream))
	m := &Message{Time: chunkAt(conn, true, 0), Src: conn.Client, Dst: conn.Server, Proto: "sched",
		Kind: "command", Name: schedNames[cmd], Number: cmd, Size: 4, Detail: map[string]int{"Command": cmd}}
	if m.Name == "" {
		m.Name = "SCH_UNKNOWN"
		m.Err = fmt.Sprintf("unknown scheduler command %d", cmd)
	}
	d.emit(m)
	return true
}

// resmon decodes a connection to the MOM's resource-monitor port: TM
// requests from job tasks, or RM requests over TCP.
func (d *dumper) resmon(conn *capture.Conn) {
	req := conn.Stream(true)
	if len(req) == 0 {
		if n := len(conn.Stream(false)); n > 0 {
			d.undecoded(conn, false, "tm", 0, n, errors.New("data from the MOM before any request"))
		}
		return
	}
	proto, err := momproto.Protocol(req)
	switch {
	case err == nil && proto == momproto.TM_PROTOCOL:
		d.tm(conn)
	case err == nil && proto == momproto.RM_PROTOCOL:
		d.rmTCP(conn)
	default:
		if err == nil {
			err = fmt.Errorf("protocol %d on the resource monitor port", proto)
		}
		d.undecoded(conn, true, "tm", 0, len(req), err)
		if n := len(conn.Stream(false)); n > 0 {
			d.undecoded(conn, false, "tm", 0, n, errors.New("answer to an undecoded request"))
		}
	}
}

func (d *dumper) tm(conn *capture.Conn) {
	var tr momproto.TMTracker
	stream := conn.Stream(true)
	off, err := decodeAll(stream, 0, func(b []byte) (int, error) {
		req, n, err := tr.DecodeRequest(b)
		if err != nil {
			return 0, err
		}
		at := int64(len(stream) - len(b))
		m := d.emit(&Message{Time: chunkAt(conn, true, at), Src: conn.Client, Dst: conn.Server, Proto: "tm",
			Kind: "request", Name: momproto.TMCommandName(req.Command), Number: req.Command, Detail: req,
			Offset: at, Size: n, Fields: tmRequestFields(req)})
		if !bytes.Equal(req.Append(nil), b[:n]) {
			m.Err = errReencode.Error()
		}
		return n, nil
	})
	if err != nil {
		d.undecoded(conn, true, "tm", int64(off), len(stream)-off, err)
	}
	stream = conn.Stream(false)
	off, err = decodeAll(stream, 0, func(b []byte) (int, error) {
		rep, n, err := tr.DecodeReply(b)
		if err != nil {
			return 0, err
		}
		at := int64(len(stream) - len(b))
		m := d.emit(&Message{Time: chunkAt(conn, false, at), Src: conn.Server, Dst: conn.Client, Proto: "tm",
			Kind: "reply", Name: momproto.TMCommandName(rep.ReplyTo), Number: rep.ReplyTo, Detail: rep,
			Offset: at, Size: n, Fields: tmReplyFields(rep)})
		if !bytes.Equal(rep.Append(nil), b[:n]) {
			m.Err = errReencode.Error()
		}
		return n, nil
	})
	if err != nil {
		d.undecoded(conn, false, "tm", int64(off), len(stream)-off, err)
	}
}

// rmTCP decodes RM over TCP, where a request's list of lines ends where
// the client's turn ends.
func (d *dumper) rmTCP(conn *capture.Conn) {
	for _, turn := range conn.Turns() {
		src, dst := ends(conn, turn.FromClient)
		m := &Message{Time: turn.Time, Src: src, Dst: dst, Proto: "rm", Offset: turn.Offset, Size: len(turn.Data)}
		var got []byte
		if turn.FromClient {
			req, err := momproto.DecodeRMRequest(turn.Data)
			if err != nil {
				d.undecoded(conn, true, "rm", turn.Offset, len(turn.Data), err)
				continue
			}
			m.Kind, m.Name, m.Number, m.Detail, m.Fields = "request", momproto.RMCommandName(req.Command), req.Command, req, rmRequestFields(req)
			got = req.Append(nil)
		} else {
			rep, err := momproto.DecodeRMReply(turn.Data)
			if err != nil {
				d.undecoded(conn, false, "rm", turn.Offset, len(turn.Data), err)
				continue
			}
			m.Kind, m.Name, m.Number, m.Detail, m.Fields = "reply", momproto.RMCodeName(rep.Code), rep.Code, rep, rmReplyFields(rep)
			got = rep.Append(nil)
		}
		if !bytes.Equal(got, turn.Data) {
			m.Err = errReencode.Error()
		}
		d.emit(m)
	}
}

// rawConn reports a connection that does not carry a PBS protocol. Its
// data is accounted as raw application data when a decoded message
// announced its port (qsub -I, job output of multi-node tasks); otherwise
// it is undecoded.
func (d *dumper) rawConn(conn *capture.Conn) {
	use, ok := d.ports[conn.Server.Port()]
	for _, turn := range conn.Turns() {
		src, dst := ends(conn, turn.FromClient)
		m := &Message{Time: turn.Time, Src: src, Dst: dst, Proto: "raw", Kind: "data", Name: use, Number: -1,
			Offset: turn.Offset, Size: len(turn.Data), Detail: map[string]string{"Data": string(turn.Data)},
			Fields: []Field{{"bytes", strconv.Itoa(len(turn.Data))}, {"data", truncate(string(turn.Data), 40)}}}
		if !ok {
			m.Proto, m.Kind, m.Name, m.Detail, m.Fields = "tcp", "undecoded", "", nil, nil
			m.Undecoded = len(turn.Data)
			m.Err = fmt.Sprintf("no protocol known for port %d", conn.Server.Port())
		}
		d.emit(m)
	}
}

// datagram decodes one UDP datagram as an RPP packet.
func (d *dumper) datagram(dg capture.Datagram) {
	m := d.emit(&Message{Time: dg.Time, Src: dg.Src, Dst: dg.Dst, Proto: "rpp", Kind: "packet", Number: -1, Size: len(dg.Payload)})
	p, err := rpp.Parse(dg.Payload)
	if err != nil {
		m.Name, m.Err, m.Undecoded = "invalid", err.Error(), len(dg.Payload)
		return
	}
	m.Name, m.Number = p.Type.String(), int(p.Type)
	m.Fields = []Field{{"stream", strconv.FormatUint(uint64(p.Stream), 10)}, {"seq", strconv.FormatUint(uint64(p.Seq), 10)}}
	if len(p.Payload) > 0 {
		m.Fields = append(m.Fields, Field{"len", strconv.Itoa(len(p.Payload))})
	}
	if err := p.Check(); err != nil {
		m.Err = err.Error()
	}
	res := d.asm.Add(dg.Src, dg.Dst, p)
	if res.Retransmit {
		m.Fields = append(m.Fields, Field{"retransmit", "true"})
	}
	if res.Lost > 0 {
		m.Err = fmt.Sprintf("%d packets missing before this one", res.Lost)
	}
	if res.Message != nil {
		d.rppMessage(m, dg, res.Message.Data)
	}
}

// rppMessage decodes a complete RPP message into the fields of the
// packet that completed it.
func (d *dumper) rppMessage(m *Message, dg capture.Datagram, body []byte) {
	var fields []Field
	var detail any
	var got []byte
	proto, err := momproto.Protocol(body)
	if err == nil {
		switch proto {
		case momproto.IS_PROTOCOL:
			var msg *momproto.ISMessage
			if msg, err = momproto.DecodeIS(body); err == nil {
				fields, detail, got = isFields(msg), msg, msg.Append(nil)
			}
		case momproto.RM_PROTOCOL:
			var req *momproto.RMRequest
			if req, err = momproto.DecodeRMRequest(body); err == nil {
				fields, detail, got = rmRequestFields(req), req, req.Append(nil)
				fields = append([]Field{{"RM", momproto.RMCommandName(req.Command)}}, fields...)
			}
		case momproto.IM_PROTOCOL:
			var msg *momproto.IMMessage
			if msg, err = d.im.Decode(dg.Src, dg.Dst, body); err == nil {
				fields, detail, got = imFields(msg), msg, msg.Append(nil)
				if msg.Command == momproto.IM_JOIN_JOB {
					j := msg.Body.(*momproto.IMJoinJob)
					d.ports[uint16(j.StdoutPort)] = "job-stdout"
					d.ports[uint16(j.StderrPort)] = "job-stderr"
				}
			}
		default:
			var rep *momproto.RMReply
			if rep, err = momproto.DecodeRMReply(body); err == nil {
				fields, detail, got = rmReplyFields(rep), rep, rep.Append(nil)
				fields = append([]Field{{"RM-reply", momproto.RMCodeName(rep.Code)}}, fields...)
			}
		}
	}
	if err != nil {
		off := 0
		var de *momproto.DecodeError
		if errors.As(err, &de) {
			off = de.Offset
		}
		m.Err = err.Error()
		m.Undecoded = len(body) - off
		m.Offset = int64(off)
		return
	}
	m.Fields = append(m.Fields, fields...)
	m.Detail = detail
	if !bytes.Equal(got, body) {
		m.Err = errReencode.Error()
	}
}
