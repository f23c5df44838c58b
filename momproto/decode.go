package momproto

import (
	"bytes"
	"errors"
	"fmt"

	"gopbs/dis"
)

// The protocol numbers: the first signed integer of every IS, RM, IM and
// TM message.
const (
	RM_PROTOCOL = 1
	TM_PROTOCOL = 2
	IM_PROTOCOL = 3
	IS_PROTOCOL = 4
)

// DecodeError reports where a message stopped making sense.
type DecodeError struct {
	Offset int    // offset in the message (or stream) of the failing item
	What   string // the item being decoded, e.g. "IS command"
	Err    error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s at offset %d: %v", e.What, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Errors wrapped in a DecodeError.
var (
	ErrTrailing    = errors.New("bytes left after the end of the message")
	ErrUnknownCmd  = errors.New("unknown command")
	ErrNoContext   = errors.New("reply to a request that was not seen")
	ErrBadProtocol = errors.New("wrong protocol number")
)

// reader decodes DIS items from one message and remembers where each item
// began, for error reports.
type reader struct {
	n     int
	r     *dis.Reader
	start int64
}

func newReader(b []byte) *reader {
	return &reader{n: len(b), r: dis.NewReader(bytes.NewReader(b))}
}

// end reports whether the whole message has been consumed.
func (m *reader) end() bool { return m.r.Offset() == int64(m.n) }

// off is the number of bytes consumed so far.
func (m *reader) off() int { return int(m.r.Offset()) }

func (m *reader) fail(what string, err error) error {
	return &DecodeError{Offset: int(m.start), What: what, Err: err}
}

func (m *reader) int(what string) (int, error) {
	m.start = m.r.Offset()
	v, err := m.r.Int()
	if err != nil {
		return 0, m.fail(what, err)
	}
	return v, nil
}

func (m *reader) uint32(what string) (uint32, error) {
	m.start = m.r.Offset()
	v, err := m.r.Uint32()
	if err != nil {
		return 0, m.fail(what, err)
	}
	return v, nil
}

func (m *reader) uint64(what string) (uint64, error) {
	m.start = m.r.Offset()
	v, err := m.r.Uint64()
	if err != nil {
		return 0, m.fail(what, err)
	}
	return v, nil
}

func (m *reader) str(what string) (string, error) {
	m.start = m.r.Offset()
	v, err := m.r.Str()
	if err != nil {
		return "", m.fail(what, err)
	}
	return v, nil
}

func (m *reader) bytes(what string) ([]byte, error) {
	m.start = m.r.Offset()
	v, err := m.r.Bytes()
	if err != nil {
		return nil, m.fail(what, err)
	}
	return v, nil
}

// strsToEnd reads counted strings until the end of the message.
func (m *reader) strsToEnd(what string) ([]string, error) {
	var out []string
	for !m.end() {
		s, err := m.str(what)
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

// strsToEmpty reads counted strings up to and including an empty one,
// which is not returned.
func (m *reader) strsToEmpty(what string) ([]string, error) {
	var out []string
	for {
		s, err := m.str(what)
		if err != nil {
			return out, err
		}
		if s == "" {
			return out, nil
		}
		out = append(out, s)
	}
}

// intsToEnd reads signed integers until the end of the message.
func (m *reader) intsToEnd(what string) ([]int, error) {
	var out []int
	for !m.end() {
		v, err := m.int(what)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// finish fails if bytes are left.
func (m *reader) finish() error {
	if !m.end() {
		m.start = m.r.Offset()
		return m.fail("end of message", ErrTrailing)
	}
	return nil
}

// Protocol returns the protocol number a message starts with.
func Protocol(b []byte) (int, error) {
	return newReader(b).int("protocol")
}

func appendInt(dst []byte, v int) []byte { return dis.AppendInt(dst, int64(v)) }

func appendStrs(dst []byte, ss []string) []byte {
	for _, s := range ss {
		dst = dis.AppendString(dst, s)
	}
	return dst
}
