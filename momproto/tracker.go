package momproto

import "net/netip"

// IMTracker decodes the IM messages between MOMs, remembering each
// request's command by sender, receiver, job and event so that the
// IM_ALL_OKAY and IM_ERROR replies coming back can be decoded. The zero
// value is ready to use.
type IMTracker struct {
	pending map[imKey]int
}

type imKey struct {
	from, to netip.AddrPort
	job      string
	event    int
}

// Decode decodes one whole IM message sent from one endpoint to another.
func (t *IMTracker) Decode(from, to netip.AddrPort, b []byte) (*IMMessage, error) {
	if t.pending == nil {
		t.pending = make(map[imKey]int)
	}
	msg, err := DecodeIM(b, func(h *IMHeader) int {
		if cmd, ok := t.pending[imKey{to, from, h.JobID, h.Event}]; ok {
			return cmd
		}
		return -1
	})
	if msg != nil && msg.Command != IM_ALL_OKAY && msg.Command != IM_ERROR {
		t.pending[imKey{from, to, msg.JobID, msg.Event}] = msg.Command
	}
	return msg, err
}

// TMTracker decodes the TM messages of one TCP connection, remembering
// each request's command by event so that the replies can be decoded.
// The zero value is ready to use.
type TMTracker struct {
	pending map[int]int
}

// DecodeRequest decodes one request from the start of b (see
// DecodeTMRequest) and remembers it.
func (t *TMTracker) DecodeRequest(b []byte) (*TMRequest, int, error) {
	req, n, err := DecodeTMRequest(b)
	if req != nil {
		if t.pending == nil {
			t.pending = make(map[int]int)
		}
		t.pending[req.Event] = req.Command
	}
	return req, n, err
}

// DecodeReply decodes one reply from the start of b (see DecodeTMReply).
func (t *TMTracker) DecodeReply(b []byte) (*TMReply, int, error) {
	return DecodeTMReply(b, func(event int) int {
		if cmd, ok := t.pending[event]; ok {
			return cmd
		}
		return -1
	})
}
