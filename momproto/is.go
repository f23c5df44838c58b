package momproto

import (
	"fmt"

	"gopbs/dis"
)

// IS protocol version and commands (spec 10 §5.1).
const (
	IS_PROTOCOL_VER = 1

	IS_NULL          = 0 // server → MOM ping; no body
	IS_HELLO         = 1 // either direction; no body
	IS_CLUSTER_ADDRS = 2 // server → MOM: IPv4 addresses to trust, to the end of the message
	IS_UPDATE        = 3 // MOM → server: state bits
	IS_STATUS        = 4 // MOM → server: name=value strings, to the end of the message
	IS_GPU_STATUS    = 5 // MOM → server (GPU builds): strings, to the end of the message
)

// Node state bits carried by IS_UPDATE (spec 10 §5.5).
const (
	INUSE_FREE             = 0x000
	INUSE_OFFLINE          = 0x001
	INUSE_DOWN             = 0x002
	INUSE_DELETED          = 0x004
	INUSE_RESERVE          = 0x008
	INUSE_JOB              = 0x010
	INUSE_JOBSHARE         = 0x020
	INUSE_BUSY             = 0x040
	INUSE_UNKNOWN          = 0x100
	INUSE_NEEDS_HELLO_PING = 0x200
)

var isNames = [...]string{"IS_NULL", "IS_HELLO", "IS_CLUSTER_ADDRS", "IS_UPDATE", "IS_STATUS", "IS_GPU_STATUS"}

// ISCommandName returns the name of an IS command, e.g. "IS_STATUS".
func ISCommandName(cmd int) string {
	if cmd >= 0 && cmd < len(isNames) {
		return isNames[cmd]
	}
	return fmt.Sprintf("IS_UNKNOWN(%d)", cmd)
}

// ISMessage is one IS message. Which body field is used depends on
// Command.
type ISMessage struct {
	Version int // IS_PROTOCOL_VER on the wire
	Command int

	Addrs  []uint32 // IS_CLUSTER_ADDRS: IPv4 addresses as host-order numbers (127.0.0.1 is 2130706433)
	State  uint32   // IS_UPDATE: INUSE_* bits
	Status []string // IS_STATUS, IS_GPU_STATUS: "name=value" strings
}

// DecodeIS decodes a whole IS message.
func DecodeIS(b []byte) (*ISMessage, error) {
	m := newReader(b)
	proto, err := m.int("IS protocol")
	if err != nil {
		return nil, err
	}
	if proto != IS_PROTOCOL {
		return nil, m.fail("IS protocol", fmt.Errorf("%w %d", ErrBadProtocol, proto))
	}
	msg := &ISMessage{}
	if msg.Version, err = m.int("IS version"); err != nil {
		return nil, err
	}
	if msg.Command, err = m.int("IS command"); err != nil {
		return nil, err
	}
	switch msg.Command {
	case IS_NULL, IS_HELLO:
	case IS_CLUSTER_ADDRS:
		for !m.end() {
			a, err := m.uint32("IS_CLUSTER_ADDRS address")
			if err != nil {
				return msg, err
			}
			msg.Addrs = append(msg.Addrs, a)
		}
	case IS_UPDATE:
		if msg.State, err = m.uint32("IS_UPDATE state"); err != nil {
			return msg, err
		}
	case IS_STATUS, IS_GPU_STATUS:
		if msg.Status, err = m.strsToEnd(ISCommandName(msg.Command) + " string"); err != nil {
			return msg, err
		}
	default:
		return msg, m.fail("IS command", fmt.Errorf("%w %d", ErrUnknownCmd, msg.Command))
	}
	return msg, m.finish()
}

// Append appends the encoding of the message to dst.
func (msg *ISMessage) Append(dst []byte) []byte {
	dst = appendInt(dst, IS_PROTOCOL)
	dst = appendInt(dst, msg.Version)
	dst = appendInt(dst, msg.Command)
	switch msg.Command {
	case IS_CLUSTER_ADDRS:
		for _, a := range msg.Addrs {
			dst = dis.AppendUint(dst, uint64(a))
		}
	case IS_UPDATE:
		dst = dis.AppendUint(dst, uint64(msg.State))
	case IS_STATUS, IS_GPU_STATUS:
		dst = appendStrs(dst, msg.Status)
	}
	return dst
}
