package momproto

import (
	"fmt"

	"gopbs/dis"
)

// RM protocol version, commands and reply codes (spec 10 §10.2).
const (
	RM_PROTOCOL_VER = 1

	RM_CMD_CLOSE    = 1 // no body, no reply
	RM_CMD_REQUEST  = 2 // request lines to the end of the message
	RM_CMD_CONFIG   = 3 // optional configuration text
	RM_CMD_SHUTDOWN = 4 // no body

	RM_RSP_OK    = 100
	RM_RSP_ERROR = 999
)

var rmNames = [...]string{1: "RM_CMD_CLOSE", 2: "RM_CMD_REQUEST", 3: "RM_CMD_CONFIG", 4: "RM_CMD_SHUTDOWN"}

// RMCommandName returns the name of an RM command, e.g. "RM_CMD_REQUEST".
func RMCommandName(cmd int) string {
	if cmd >= RM_CMD_CLOSE && cmd <= RM_CMD_SHUTDOWN {
		return rmNames[cmd]
	}
	return fmt.Sprintf("RM_CMD_UNKNOWN(%d)", cmd)
}

// RMCodeName returns the name of an RM reply code, e.g. "RM_RSP_OK".
func RMCodeName(code int) string {
	switch code {
	case RM_RSP_OK:
		return "RM_RSP_OK"
	case RM_RSP_ERROR:
		return "RM_RSP_ERROR"
	}
	return fmt.Sprintf("RM_RSP_UNKNOWN(%d)", code)
}

// RMRequest is a request to a MOM's resource monitor.
type RMRequest struct {
	Version int // RM_PROTOCOL_VER on the wire
	Command int
	// Lines are the request lines of RM_CMD_REQUEST ("loadave",
	// "size[fs=/tmp]", ...) or the single optional text of RM_CMD_CONFIG.
	Lines []string
}

// DecodeRMRequest decodes a whole RM request message.
func DecodeRMRequest(b []byte) (*RMRequest, error) {
	m := newReader(b)
	proto, err := m.int("RM protocol")
	if err != nil {
		return nil, err
	}
	if proto != RM_PROTOCOL {
		return nil, m.fail("RM protocol", fmt.Errorf("%w %d", ErrBadProtocol, proto))
	}
	req := &RMRequest{}
	if req.Version, err = m.int("RM version"); err != nil {
		return nil, err
	}
	if req.Command, err = m.int("RM command"); err != nil {
		return nil, err
	}
	switch req.Command {
	case RM_CMD_CLOSE, RM_CMD_SHUTDOWN:
	case RM_CMD_REQUEST:
		if req.Lines, err = m.strsToEnd("RM request line"); err != nil {
			return req, err
		}
	case RM_CMD_CONFIG:
		if !m.end() {
			s, err := m.str("RM config text")
			if err != nil {
				return req, err
			}
			req.Lines = []string{s}
		}
	default:
		return req, m.fail("RM command", fmt.Errorf("%w %d", ErrUnknownCmd, req.Command))
	}
	return req, m.finish()
}

// Append appends the encoding of the request to dst.
func (req *RMRequest) Append(dst []byte) []byte {
	dst = appendInt(dst, RM_PROTOCOL)
	dst = appendInt(dst, req.Version)
	dst = appendInt(dst, req.Command)
	return appendStrs(dst, req.Lines)
}

// RMReply is a resource monitor's answer: a code and, for RM_RSP_OK to a
// request, one answer line per request line ("loadave=0.12").
type RMReply struct {
	Code    int
	Answers []string
}

// DecodeRMReply decodes a whole RM reply message.
func DecodeRMReply(b []byte) (*RMReply, error) {
	m := newReader(b)
	code, err := m.int("RM reply code")
	if err != nil {
		return nil, err
	}
	rep := &RMReply{Code: code}
	if rep.Answers, err = m.strsToEnd("RM answer"); err != nil {
		return rep, err
	}
	return rep, nil
}

// Append appends the encoding of the reply to dst.
func (rep *RMReply) Append(dst []byte) []byte {
	dst = dis.AppendInt(dst, int64(rep.Code))
	return appendStrs(dst, rep.Answers)
}
