// Package mom is pbs_server's client of the MOMs' batch service: a TCP
// connection from a reserved port to a MOM, carrying requests in
// sequence, each answered by a reply (spec 10 §4). The server launches
// jobs, relays signals, holds and changes, and ends jobs over it.
package mom

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/iff"
	"gopbs/server/monitor"
)

// User is the header user of every request the server sends to a MOM
// (spec 10 §4).
const User = "PBS_Server"

// Timeout bounds one request/reply exchange with a MOM or the connection
// set-up (TORQUE's tcp_timeout).
const Timeout = 10 * time.Second

// DialReserved opens a TCP connection to addr from a privileged local
// port counting down from 1023, as TORQUE daemons connect to each other.
// Without the privilege to bind one (tests as a user) it falls back to
// an ordinary port.
func DialReserved(ctx context.Context, addr string) (net.Conn, error) {
	d := iff.ReservedDialer{Unprivileged: true}
	return d.Dial(ctx, addr)
}

// Dialer connects to MOMs.
type Dialer struct {
	Port int // the MOMs' batch port
	// Resolve, if set, maps a MOM host name to its addresses (the first
	// is dialled); otherwise the host name is dialled.
	Resolve func(host string) []netip.Addr
	// Dial, if set, replaces both (tests).
	Dial func(ctx context.Context, host string) (net.Conn, error)
	Obs  monitor.Observer // told of failed connections and requests
}

// Connect connects to the MOM on host.
func (d Dialer) Connect(host string) (*Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	var nc net.Conn
	var err error
	switch {
	case d.Dial != nil:
		nc, err = d.Dial(ctx, host)
	case d.Resolve != nil:
		addrs := d.Resolve(host)
		if len(addrs) == 0 {
			return nil, fmt.Errorf("connect to MOM %s: host name does not resolve", host)
		}
		nc, err = DialReserved(ctx, netip.AddrPortFrom(addrs[0], uint16(d.Port)).String())
	default:
		nc, err = DialReserved(ctx, net.JoinHostPort(host, strconv.Itoa(d.Port)))
	}
	if err != nil {
		d.Obs.MomLinkError(monitor.MomConnect)
		return nil, fmt.Errorf("connect to MOM %s: %w", host, err)
	}
	return &Conn{nc: nc, r: dis.NewReader(nc), obs: d.Obs}, nil
}

// Request sends one request to the MOM on host on a new connection and
// returns its reply.
func (d Dialer) Request(host string, typ int, body batchreq.Body, ext string) (*batchreq.Reply, error) {
	m, err := d.Connect(host)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return m.Call(typ, body, ext)
}

// Conn is one TCP connection to a MOM carrying requests in sequence.
type Conn struct {
	nc  net.Conn
	r   *dis.Reader
	obs monitor.Observer // told of failed requests
}

// Call sends one request with the extension ext and reads its reply.
func (m *Conn) Call(typ int, body batchreq.Body, ext string) (*batchreq.Reply, error) {
	req := batchreq.NewRequest(typ, User, body)
	req.SetExtension(ext)
	m.nc.SetDeadline(time.Now().Add(Timeout))
	if _, err := m.nc.Write(req.Append(nil)); err != nil {
		m.obs.MomLinkError(monitor.MomRequest)
		return nil, fmt.Errorf("send %s: %w", batchreq.RequestName(typ), err)
	}
	p, err := batchreq.ReadReply(m.r)
	if err != nil {
		m.obs.MomLinkError(monitor.MomRequest)
		return nil, fmt.Errorf("reply to %s: %w", batchreq.RequestName(typ), err)
	}
	return p, nil
}

// Close sends Disconnect and closes the connection.
func (m *Conn) Close() {
	m.nc.SetDeadline(time.Now().Add(time.Second))
	m.nc.Write(batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, User, nil).Append(nil))
	m.nc.Close()
}

// ResolveAddr returns the addresses of a host name (node names may be
// addresses).
func ResolveAddr(host string) []netip.Addr {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}
	}
	addrs, err := net.LookupHost(host)
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, x := range addrs {
		if a, err := netip.ParseAddr(x); err == nil {
			out = append(out, a.Unmap())
		}
	}
	return out
}
