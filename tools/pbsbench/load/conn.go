// Package load is the client side of the GoPBS load tools (pbsbench,
// pbsfill): batch-protocol connections authenticated the way pbs_iff
// does it, the request sequences of qsub, qstat and qselect, and a
// concurrent driver that measures rates and latencies. It works against
// any TORQUE 2.5.13-compatible server.
package load

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/iff"
)

// Dialer opens batch connections to one server.
type Dialer struct {
	// Addr is the server's host:port.
	Addr string
	// User is the user name put in request headers.
	User string
	// Auth makes every connection authenticate like pbs_iff: a second
	// connection from a reserved port sends AuthenticateUser naming the
	// client connection's port. It needs root (CAP_NET_BIND_SERVICE).
	// Without Auth the connection itself comes from a reserved port,
	// which servers treat as a privileged daemon connection.
	Auth bool
	// Timeout bounds connecting and each request/reply exchange
	// (default 30 s).
	Timeout time.Duration

	reserved   iff.ReservedDialer // rotates over the reserved ports
	spreadOnce sync.Once
	readers    sync.Pool // *dis.Reader of closed connections (16 KiB buffers)
}

func (d *Dialer) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return 30 * time.Second
}

// Conn is one batch connection: one request, one reply at a time.
type Conn struct {
	d     *Dialer
	nc    net.Conn
	r     *dis.Reader
	user  string
	wait  time.Duration
	limit time.Time // deadline last set
	buf   []byte
}

// Dial opens an authenticated connection.
func (d *Dialer) Dial() (*Conn, error) {
	if !d.Auth {
		nc, err := d.dialReserved()
		if err != nil {
			return nil, err
		}
		return d.wrap(nc), nil
	}
	nd := net.Dialer{Timeout: d.timeout(), KeepAlive: -1}
	nc, err := nd.Dial("tcp", d.Addr)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", d.Addr, err)
	}
	c := d.wrap(nc)
	if err := d.authenticate(nc.LocalAddr().(*net.TCPAddr).Port); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func (d *Dialer) wrap(nc net.Conn) *Conn {
	r, ok := d.readers.Get().(*dis.Reader)
	if ok {
		r.Reset(nc)
	} else {
		r = dis.NewReader(nc)
	}
	return &Conn{d: d, nc: nc, r: r, user: d.User, wait: d.timeout()}
}

// release returns the connection's reader to its dialer's pool.
func (c *Conn) release() {
	if c.r != nil {
		c.r.Reset(nil)
		c.d.readers.Put(c.r)
		c.r = nil
	}
}

// arm moves the connection's deadline to now plus the timeout when it
// has gone stale by more than a second (a timer operation saved on most
// requests; the bound stays within a second of the timeout).
func (c *Conn) arm() {
	if limit := time.Now().Add(c.wait); limit.Sub(c.limit) > time.Second {
		c.nc.SetDeadline(limit)
		c.limit = limit
	}
}

// authenticate does what pbs_iff does for a client whose connection has
// local port port: from a reserved port it sends AuthenticateUser, reads
// the reply, then sends Disconnect and waits for the server to close
// first, so that TIME_WAIT stays on the server's side and the few
// reserved ports can be reused at once.
func (d *Dialer) authenticate(port int) error {
	nc, err := d.dialReserved()
	if err != nil {
		return err
	}
	c := d.wrap(nc)
	p, err := c.Do(batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, d.User, &batchreq.AuthenUser{Port: port}))
	if err == nil && p.Code != 0 {
		err = &ReplyError{Type: batchreq.PBS_BATCH_AuthenUser, Code: p.Code, Text: p.Text}
	}
	c.Close()
	if err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}
	return nil
}

// dialReserved connects from the next free reserved port.
func (d *Dialer) dialReserved() (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout())
	defer cancel()
	d.spreadOnce.Do(func() { d.reserved.Spread = true })
	return d.reserved.Dial(ctx, d.Addr)
}

// ReplyError is a reply with a non-zero code.
type ReplyError struct {
	Type int // request type
	Code int
	Text string
}

func (e *ReplyError) Error() string {
	s := fmt.Sprintf("%s: code %d", batchreq.RequestName(e.Type), e.Code)
	if t := batchreq.ErrorText(e.Code); t != "" {
		s += " (" + t + ")"
	}
	if e.Text != "" {
		s += ": " + e.Text
	}
	return s
}

// Do sends one request and reads its reply. A reply with a non-zero
// code is returned without error; callers decide.
func (c *Conn) Do(req *batchreq.Request) (*batchreq.Reply, error) {
	if c.r == nil {
		return nil, fmt.Errorf("%s: connection closed", batchreq.RequestName(req.Type))
	}
	c.arm()
	c.buf = req.Append(c.buf[:0])
	if _, err := c.nc.Write(c.buf); err != nil {
		return nil, fmt.Errorf("%s: send: %w", batchreq.RequestName(req.Type), err)
	}
	p, err := batchreq.ReadReply(c.r)
	if err != nil {
		return nil, fmt.Errorf("%s: reply: %w", batchreq.RequestName(req.Type), err)
	}
	return p, nil
}

// must is Do turning a non-zero reply code into an error.
func (c *Conn) must(req *batchreq.Request) (*batchreq.Reply, error) {
	p, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if p.Code != 0 {
		return p, &ReplyError{Type: req.Type, Code: p.Code, Text: p.Text}
	}
	return p, nil
}

// LocalPort returns the connection's local port.
func (c *Conn) LocalPort() int { return c.nc.LocalAddr().(*net.TCPAddr).Port }

// Close sends Disconnect, waits (briefly) for the server to close its
// end, and closes.
func (c *Conn) Close() error {
	c.nc.SetDeadline(time.Now().Add(2 * time.Second))
	c.buf = batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, c.user, nil).Append(c.buf[:0])
	if _, err := c.nc.Write(c.buf); err == nil {
		io.Copy(io.Discard, c.nc)
	}
	c.release()
	return c.nc.Close()
}

// Abort closes the connection at once (no Disconnect).
func (c *Conn) Abort() error {
	c.release()
	return c.nc.Close()
}

// Raw writes b as it is, half-closes the connection, reads and discards
// whatever the server answers until it closes (bounded by the timeout),
// and closes. Robustness tests use it to deliver damaged requests on an
// authenticated connection.
func (c *Conn) Raw(b []byte) error {
	defer c.nc.Close()
	c.nc.SetDeadline(time.Now().Add(c.wait))
	if _, err := c.nc.Write(b); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	if tc, ok := c.nc.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	_, err := io.Copy(io.Discard, c.nc)
	return err
}

// Write sends b as it is (an encoded request) without reading a reply.
func (c *Conn) Write(b []byte) error {
	c.nc.SetWriteDeadline(time.Now().Add(c.wait))
	_, err := c.nc.Write(b)
	return err
}
