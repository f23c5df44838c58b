package momquery

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"gopbs/dis"
	"gopbs/iff"
)

// RM protocol numbers (spec 10 §10.2).
const (
	rmProtocol   = 1
	rmVersion    = 1
	rmCmdClose   = 1
	rmCmdRequest = 2
	rmRspOK      = 100
)

// AppendRequest appends an RM_CMD_REQUEST message with lines.
func AppendRequest(dst []byte, lines []string) []byte {
	dst = dis.AppendInt(dst, rmProtocol)
	dst = dis.AppendInt(dst, rmVersion)
	dst = dis.AppendInt(dst, rmCmdRequest)
	for _, l := range lines {
		dst = dis.AppendString(dst, l)
	}
	return dst
}

// AppendClose appends an RM_CMD_CLOSE message.
func AppendClose(dst []byte) []byte {
	dst = dis.AppendInt(dst, rmProtocol)
	dst = dis.AppendInt(dst, rmVersion)
	return dis.AppendInt(dst, rmCmdClose)
}

// ReadReply reads an RM reply with n answers.
func ReadReply(r *dis.Reader, n int) ([]string, error) {
	code, err := r.Int()
	if err != nil {
		return nil, fmt.Errorf("RM reply code: %w", err)
	}
	if code != rmRspOK {
		return nil, fmt.Errorf("RM reply code %d", code)
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		s, err := r.StrMax(1 << 20)
		if err != nil {
			return nil, fmt.Errorf("RM answer %d: %w", i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// TCP queries MOMs over TCP from a reserved source port (the RM transport
// of clients built without RPP; TORQUE MOMs accept it on the RM port).
type TCP struct {
	Port    int
	Timeout time.Duration
}

// NewTCP returns a TCP querier for MOMs listening on port.
func NewTCP(port int) *TCP { return &TCP{Port: port, Timeout: 5 * time.Second} }

// Query implements Querier.
func (q *TCP) Query(ctx context.Context, host string, lines []string) ([]string, error) {
	if q.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.Timeout)
		defer cancel()
	}
	c, err := dialReserved(ctx, net.JoinHostPort(host, strconv.Itoa(q.Port)))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write(AppendRequest(nil, lines)); err != nil {
		return nil, fmt.Errorf("RM request to %s: %w", host, err)
	}
	answers, err := ReadReply(dis.NewReader(c), len(lines))
	if err != nil {
		return nil, fmt.Errorf("RM reply from %s: %w", host, err)
	}
	c.Write(AppendClose(nil))
	return answers, nil
}

// dialReserved connects from the first free port counting down from
// 1023; without the privilege to bind one it falls back to an ordinary
// port (the MOM then answers only in restricted mode, if at all).
func dialReserved(ctx context.Context, addr string) (net.Conn, error) {
	d := iff.ReservedDialer{Unprivileged: true}
	c, err := d.Dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("connect to MOM: %w", err)
	}
	return c, nil
}
