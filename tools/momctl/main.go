// Command momctl queries and controls pbs_mom daemons through their
// resource monitor (RM protocol over RPP to UDP port 15003; spec 10 §10,
// spec 05 §8).
//
// Usage:
//
//	momctl [-f hostfile | -h host[,host...]] [-p port] [-v] action
//
// with exactly one action (-q may be repeated):
//
//	-q name     query a resource or setting; one line per name:
//	            "   <host>: <name, right-aligned in 12> = '<answer>'"
//	-d level    diagnostics (request "diag<level>"); prints MOM's report
//	-C          cycle: MOM sends its status to the server at once;
//	            prints "mom <host> successfully cycled <answer>"
//	-c jobid    clear a stale job from MOM ("all" clears every job);
//	            prints "mom <host> clearjob <jobid>: <answer>"
//	-s          shut MOM down (RM_CMD_SHUTDOWN);
//	            prints "mom <host> successfully shut down"
//	-r file     send file as MOM's new configuration and make MOM
//	            re-read it (RM_CMD_CONFIG with "CONFIG:<content>");
//	            "-r LOCAL" makes MOM re-read its own file unchanged;
//	            prints "mom <host> successfully reconfigured"
//
// Hosts default to "localhost"; -h takes a comma-separated list, -f a
// file with host names separated by white space or commas ('#' starts a
// comment). -p overrides the RM port. -v prints every request line sent
// on stderr.
//
// The output of -q, -d and -C is TORQUE's (captures 23–26); the messages
// of -c, -s, -r and of errors are not in the captures and are GoPBS's own.
// Like TORQUE's, momctl sends from a reserved UDP port (needs root): MOM
// answers only privileged ports of trusted hosts. A usage error prints the
// usage on stderr and exits 2; a host that cannot be reached or refuses
// the request is reported on stderr as "momctl: <host>: <reason>" and
// makes momctl exit 1 after trying the other hosts.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gopbs/momproto"
	"gopbs/pbs"
	"gopbs/pbs/cli"
	"gopbs/rpp"
)

// DefaultRMPort is pbs_mom's resource monitor port.
const DefaultRMPort = 15003

const usageText = `usage: momctl [-f hostfile | -h host[,host...]] [-p port] [-v] action
actions (exactly one; -q may be repeated):
  -C            make MOM send its status to the server now
  -c jobid|all  clear a stale job (or every job) from MOM
  -d level      print MOM's diagnostics at level 0-4
  -q name       query a resource or setting
  -r file|LOCAL send file as MOM's configuration (LOCAL: re-read its own)
  -s            shut MOM down
`

// action is what one invocation asks every host.
type action struct {
	kind    byte     // 'q', 'd', 'C', 'c', 's', 'r'
	lines   []string // request lines (-q, -d, -C, -c)
	config  string   // RM_CMD_CONFIG text (-r)
	sendCfg bool     // whether config is sent at all
}

// invocation is a parsed command line.
type invocation struct {
	hosts   []string
	port    int
	verbose bool
	act     action
	jobid   string // -c operand
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, &client{dial: dialReserved}))
}

// run executes momctl with args and returns the exit status.
func run(args []string, stdout, stderr io.Writer, c *client) int {
	inv, err := parse(args, stderr)
	if err != nil {
		if err != errUsage {
			fmt.Fprintf(stderr, "momctl: %v\n", err)
		}
		io.WriteString(stderr, usageText)
		return 2
	}
	status := 0
	for _, host := range inv.hosts {
		if err := inv.do(c, host, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "momctl: %s: %v\n", host, err)
			status = 1
		}
	}
	return status
}

var errUsage = errors.New("usage")

// parse parses the command line.
func parse(args []string, stderr io.Writer) (*invocation, error) {
	opts, operands, bad := cli.Getopt(args, "Cc:d:f:h:p:q:r:sv", "momctl", stderr)
	if bad {
		return nil, errUsage
	}
	if len(operands) > 0 {
		return nil, fmt.Errorf("unexpected operand %q", operands[0])
	}
	inv := &invocation{port: DefaultRMPort}
	var kinds []byte
	setKind := func(k byte) {
		for _, x := range kinds {
			if x == k {
				return
			}
		}
		kinds = append(kinds, k)
	}
	hostSource := 0
	for _, o := range opts {
		switch o.C {
		case 'C':
			setKind('C')
			inv.act.lines = []string{"cycle"}
		case 'c':
			setKind('c')
			if o.Arg != "all" {
				if _, err := pbs.ParseJobID(o.Arg); err != nil {
					return nil, fmt.Errorf("illegally formed job identifier %q", o.Arg)
				}
			}
			inv.jobid = o.Arg
			inv.act.lines = []string{"clearjob=" + o.Arg}
		case 'd':
			setKind('d')
			n, err := strconv.Atoi(o.Arg)
			if err != nil || n < 0 || n > 4 {
				return nil, fmt.Errorf("invalid diagnostic level %q", o.Arg)
			}
			inv.act.lines = []string{"diag" + strconv.Itoa(n)}
		case 'q':
			setKind('q')
			if o.Arg == "" {
				return nil, fmt.Errorf("empty query")
			}
			inv.act.lines = append(inv.act.lines, o.Arg)
		case 's':
			setKind('s')
		case 'r':
			setKind('r')
			inv.act.sendCfg = o.Arg != "LOCAL"
			if inv.act.sendCfg {
				b, err := os.ReadFile(o.Arg)
				if err != nil {
					return nil, fmt.Errorf("cannot read configuration: %w", err)
				}
				inv.act.config = "CONFIG:" + string(b)
			}
		case 'h':
			hostSource++
			for _, h := range strings.Split(o.Arg, ",") {
				if h = strings.TrimSpace(h); h != "" {
					inv.hosts = append(inv.hosts, h)
				}
			}
		case 'f':
			hostSource++
			hosts, err := readHostFile(o.Arg)
			if err != nil {
				return nil, err
			}
			inv.hosts = append(inv.hosts, hosts...)
		case 'p':
			p, err := strconv.Atoi(o.Arg)
			if err != nil || p <= 0 || p > 65535 {
				return nil, fmt.Errorf("invalid port %q", o.Arg)
			}
			inv.port = p
		case 'v':
			inv.verbose = true
		}
	}
	if len(kinds) != 1 || hostSource > 1 {
		return nil, errUsage
	}
	inv.act.kind = kinds[0]
	if hostSource == 0 {
		inv.hosts = []string{"localhost"}
	}
	if len(inv.hosts) == 0 {
		return nil, fmt.Errorf("no host given")
	}
	return inv, nil
}

// readHostFile returns the host names listed in a -f file.
func readHostFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read host file: %w", err)
	}
	var hosts []string
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		hosts = append(hosts, strings.FieldsFunc(line, func(r rune) bool {
			return r == ',' || r == ' ' || r == '\t' || r == '\r'
		})...)
	}
	return hosts, nil
}

// do performs the action on one host and prints the result.
func (inv *invocation) do(c *client, host string, stdout, stderr io.Writer) error {
	req := &momproto.RMRequest{Version: momproto.RM_PROTOCOL_VER, Command: momproto.RM_CMD_REQUEST, Lines: inv.act.lines}
	switch inv.act.kind {
	case 's':
		req.Command, req.Lines = momproto.RM_CMD_SHUTDOWN, nil
	case 'r':
		req.Command, req.Lines = momproto.RM_CMD_CONFIG, nil
		if inv.act.sendCfg {
			req.Lines = []string{inv.act.config}
		}
	}
	if inv.verbose {
		for _, l := range req.Lines {
			fmt.Fprintf(stderr, "momctl: %s: sending %s %q\n", host, momproto.RMCommandName(req.Command), l)
		}
		if len(req.Lines) == 0 {
			fmt.Fprintf(stderr, "momctl: %s: sending %s\n", host, momproto.RMCommandName(req.Command))
		}
	}
	rep, err := c.exchange(host, inv.port, req)
	if err != nil {
		return err
	}
	if rep.Code != momproto.RM_RSP_OK {
		return fmt.Errorf("request refused (%s)", momproto.RMCodeName(rep.Code))
	}
	switch inv.act.kind {
	case 'q':
		if len(rep.Answers) != len(req.Lines) {
			return fmt.Errorf("%d answers to %d queries", len(rep.Answers), len(req.Lines))
		}
		for i, q := range req.Lines {
			fmt.Fprintf(stdout, "   %s: %12s = '%s'\n", host, q, rep.Answers[i])
		}
	case 'd':
		if len(rep.Answers) == 0 {
			return fmt.Errorf("no diagnostics returned")
		}
		fmt.Fprintf(stdout, "%s\n", rep.Answers[0])
	case 'C':
		fmt.Fprintf(stdout, "mom %s successfully cycled %s\n", host, strings.Join(rep.Answers, " "))
	case 'c':
		fmt.Fprintf(stdout, "mom %s clearjob %s: %s\n", host, inv.jobid, strings.Join(rep.Answers, " "))
	case 's':
		fmt.Fprintf(stdout, "mom %s successfully shut down\n", host)
	case 'r':
		fmt.Fprintf(stdout, "mom %s successfully reconfigured\n", host)
	}
	return nil
}

// client talks to MOMs' resource monitors.
type client struct {
	// dial returns a datagram socket connected to the MOM's RM address.
	dial func(mom netip.AddrPort) (*net.UDPConn, error)
	// rpp tunes the stream transport; nil = momctl's defaults.
	rpp *rpp.Options
	// timeout bounds one host's exchange (default 15 s); a MOM that does
	// not answer at all is given up after about 6 s (1 s x 5 resends).
	timeout time.Duration
}

// dialReserved connects a UDP socket bound to the first free reserved
// port (counting down from 1023, as TORQUE's clients bind) to mom.
func dialReserved(mom netip.AddrPort) (*net.UDPConn, error) {
	var last error
	for port := 1023; port >= 512; port-- {
		laddr := &net.UDPAddr{Port: port}
		c, err := net.DialUDP("udp4", laddr, net.UDPAddrFromAddrPort(mom))
		if err == nil {
			return c, nil
		}
		last = err
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("no reserved UDP port (momctl must run as root): %w", err)
		}
	}
	return nil, fmt.Errorf("no free reserved UDP port: %w", last)
}

// errRefused reports an ICMP port unreachable: nothing listens on the
// MOM's RM port.
var errRefused = errors.New("connection refused (is pbs_mom running?)")

// connectedConn adapts a connected UDP socket to the net.PacketConn an
// RPP endpoint uses, and reports a refused connection through refused.
type connectedConn struct {
	*net.UDPConn
	refused func()
}

func (c connectedConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, err := c.UDPConn.Read(b)
	if errors.Is(err, syscall.ECONNREFUSED) {
		c.refused()
	}
	return n, c.RemoteAddr(), err
}

func (c connectedConn) WriteTo(b []byte, _ net.Addr) (int, error) {
	return c.UDPConn.Write(b)
}

// resolve returns the IPv4 address of host (MOMs listen on IPv4).
func resolve(ctx context.Context, host string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap(), nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
	if err != nil || len(addrs) == 0 {
		return netip.Addr{}, fmt.Errorf("cannot resolve host: %w", err)
	}
	return addrs[0].Unmap(), nil
}

// exchange sends req to the RM of host:port on a new RPP stream, reads
// the reply (none for RM_CMD_SHUTDOWN is an error), then sends
// RM_CMD_CLOSE and closes the stream as TORQUE's momctl does.
func (c *client) exchange(host string, port int, req *momproto.RMRequest) (*momproto.RMReply, error) {
	timeout := c.timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	addr, err := resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	mom := netip.AddrPortFrom(addr, uint16(port))
	conn, err := c.dial(mom)
	if err != nil {
		return nil, err
	}
	ctx, cancelCause := context.WithCancelCause(ctx)
	defer cancelCause(nil)
	pc := connectedConn{UDPConn: conn, refused: func() { cancelCause(errRefused) }}
	opts := c.rpp
	if opts == nil {
		opts = &rpp.Options{Timeout: time.Second, Retry: 5}
	}
	ep := rpp.NewEndpoint(pc, opts)
	defer ep.Close()
	s, err := ep.Open(mom)
	if err != nil {
		return nil, fmt.Errorf("cannot open a stream to %v: %w", addr, err)
	}
	if err := s.Send(req.Append(nil)); err != nil {
		return nil, fmt.Errorf("cannot send the request: %w", err)
	}
	msg, err := s.Recv(ctx)
	if err != nil {
		switch {
		case err == io.EOF:
			err = errors.New("MOM closed the connection (not authorized?)")
		case context.Cause(ctx) != nil:
			err = context.Cause(ctx)
		}
		return nil, fmt.Errorf("no reply from %v port %d: %w", addr, port, err)
	}
	rep, err := momproto.DecodeRMReply(msg)
	if err != nil {
		return nil, fmt.Errorf("bad reply: %w", err)
	}
	closeReq := &momproto.RMRequest{Version: momproto.RM_PROTOCOL_VER, Command: momproto.RM_CMD_CLOSE}
	if s.Send(closeReq.Append(nil)) == nil {
		s.Close()
		// Let the GOODBYE exchange finish so MOM releases its side at once.
		select {
		case <-s.Done():
		case <-time.After(2 * time.Second):
		}
	} else {
		s.Close()
	}
	return rep, nil
}
