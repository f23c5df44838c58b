package momquery

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"gopbs/momproto"
	"gopbs/rpp"
)

// RPP queries MOMs over RPP (UDP), as TORQUE's scheduler does: one new
// stream per query to the MOM's RM port, the REQUEST, the answer, then
// RM_CMD_CLOSE and GOODBYE. The client socket is bound, at the first
// query, to a reserved UDP port counting down from 1023 (an ordinary port
// when that is not permitted).
type RPP struct {
	Port    int
	Timeout time.Duration
	// Listen creates the client socket; nil means a reserved port on all
	// addresses.
	Listen func() (net.PacketConn, error)

	mu sync.Mutex
	ep *rpp.Endpoint
}

// NewRPP returns an RPP querier for MOMs whose RM port is port.
func NewRPP(port int) *RPP { return &RPP{Port: port, Timeout: 5 * time.Second} }

func (q *RPP) endpoint() (*rpp.Endpoint, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ep != nil {
		return q.ep, nil
	}
	listen := q.Listen
	if listen == nil {
		listen = func() (net.PacketConn, error) {
			pc, err := rpp.ListenReserved(netip.IPv4Unspecified())
			if err != nil {
				return net.ListenPacket("udp4", ":0")
			}
			return pc, nil
		}
	}
	pc, err := listen()
	if err != nil {
		return nil, fmt.Errorf("RM client socket: %w", err)
	}
	q.ep = rpp.NewEndpoint(pc, &rpp.Options{Timeout: time.Second, Retry: 5})
	return q.ep, nil
}

// Close releases the client socket.
func (q *RPP) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ep == nil {
		return nil
	}
	err := q.ep.Close()
	q.ep = nil
	return err
}

func resolve(host string, port int) (netip.AddrPort, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
	}
	addrs, err := net.LookupHost(host)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, s := range addrs {
		if a, err := netip.ParseAddr(s); err == nil && a.Unmap().Is4() {
			return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
		}
	}
	return netip.AddrPort{}, fmt.Errorf("resolve %s: no IPv4 address", host)
}

// HostKey implements HostKeyer: the IPv4 address the query is sent to,
// or host itself when it does not resolve. An RPP endpoint takes a second
// stream opened from the same socket as a restart of the peer and drops
// the first, so one MOM must not be asked twice at once.
func (q *RPP) HostKey(host string) string {
	if a, err := resolve(host, q.Port); err == nil {
		return a.Addr().String()
	}
	return host
}

// Query implements Querier.
func (q *RPP) Query(ctx context.Context, host string, lines []string) ([]string, error) {
	if q.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.Timeout)
		defer cancel()
	}
	addr, err := resolve(host, q.Port)
	if err != nil {
		return nil, err
	}
	ep, err := q.endpoint()
	if err != nil {
		return nil, err
	}
	s, err := ep.Open(addr)
	if err != nil {
		return nil, fmt.Errorf("open RM stream to %s: %w", net.JoinHostPort(host, strconv.Itoa(q.Port)), err)
	}
	defer s.Close()
	req := &momproto.RMRequest{Version: momproto.RM_PROTOCOL_VER, Command: momproto.RM_CMD_REQUEST, Lines: lines}
	if err := s.Send(req.Append(nil)); err != nil {
		return nil, fmt.Errorf("RM request to %s: %w", host, err)
	}
	msg, err := s.Recv(ctx)
	if err != nil {
		return nil, fmt.Errorf("RM reply from %s: %w", host, err)
	}
	rep, err := momproto.DecodeRMReply(msg)
	if err != nil {
		return nil, fmt.Errorf("RM reply from %s: %w", host, err)
	}
	if rep.Code != momproto.RM_RSP_OK {
		return nil, fmt.Errorf("RM reply from %s: code %d", host, rep.Code)
	}
	closeReq := &momproto.RMRequest{Version: momproto.RM_PROTOCOL_VER, Command: momproto.RM_CMD_CLOSE}
	s.Send(closeReq.Append(nil))
	return rep.Answers, nil
}
