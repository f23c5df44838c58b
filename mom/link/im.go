package link

import (
	"context"
	"fmt"

	"gopbs/batchreq"
	"gopbs/momproto"
	"gopbs/rpp"
)

// IMHandler serves IM (MOM ↔ MOM) requests arriving on an RPP stream
// (spec 10 §11.1). It returns the reply to send, or nil for none. The
// multi-node implementation plugs in here through Options.IM.
type IMHandler interface {
	ServeIM(ctx context.Context, s *rpp.Stream, msg *momproto.IMMessage) *momproto.IMMessage
}

// noIM is the default IMHandler: this MOM runs single-node jobs only, so
// every request is refused with IM_ERROR / PBSE_NOSUP (the mother
// superior then aborts the job) and replies are ignored.
type noIM struct{}

func (noIM) ServeIM(_ context.Context, _ *rpp.Stream, msg *momproto.IMMessage) *momproto.IMMessage {
	switch msg.Command {
	case momproto.IM_ALL_OKAY, momproto.IM_ERROR, momproto.IM_ABORT_JOB:
		return nil // replies, and the one request that gets no answer
	}
	h := msg.IMHeader
	h.Command = momproto.IM_ERROR
	return &momproto.IMMessage{IMHeader: h, ReplyTo: msg.Command, Body: &momproto.Ints{Values: []int{batchreq.PBSE_NOSUP}}}
}

// imMessage serves one IM message of a stream; it reports whether the
// stream may go on.
func (m *Mom) imMessage(ctx context.Context, s *rpp.Stream, b []byte) bool {
	peer := s.RemoteAddr()
	if !m.Trusted(peer.Addr()) {
		m.log.Error(0, "", "im_request", fmt.Sprintf("bad connect from %v", peer))
		return false
	}
	msg, err := momproto.DecodeIM(b, nil)
	if err != nil {
		m.logErr("im_request", err, "from "+peer.String())
		return false
	}
	h := m.opt.IM
	if h == nil {
		h = noIM{}
	}
	if rep := h.ServeIM(ctx, s, msg); rep != nil {
		if err := s.Send(rep.Append(nil)); err != nil {
			return false
		}
	}
	return true
}
