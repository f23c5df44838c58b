// Command pbs_iff is the setuid-root authentication helper of the batch
// protocol. A client connects to pbs_server from an ordinary port and runs
//
//	pbs_iff host port fd
//
// with the connected socket inherited as descriptor fd; pbs_iff connects to
// the same server from a reserved port, sends AuthenticateUser naming the
// real user and the client socket's local port, and on success writes the
// 4-byte integer 0 ("no credential") to its standard output.
//
// Two further forms exist: "pbs_iff -t host port" authenticates pbs_iff's
// own connection (a test), and, for programs that cannot hand a descriptor
// to a child (e.g. a Java scheduler), the third operand may be the client
// connection's local port number instead of a descriptor: a value that is
// not an open socket and is at least 1024 is taken as the port.
//
// Exit statuses: 0 success, 1 usage, unknown host, bad port or a refusal
// by the server, 2 send failure, 3 no user or no socket name, 4 no
// connection to the server.
package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/iff"
	"gopbs/pbs"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, isTerminal(1)))
}

func usage(prog string) int {
	fmt.Fprintf(os.Stderr, "Usage: %s [-t] host port [parent_port]\n", prog)
	fmt.Fprintf(os.Stderr, "NOTE:  one of '-t' or 'parent_port' must be specified\n")
	return 1
}

// run is pbs_iff with its arguments; the credential goes to stdout, and
// stdoutIsTTY refuses to write it to a terminal.
func run(args []string, stdout io.Writer, stdoutIsTTY bool) int {
	prog := args[0]
	os.Unsetenv("LOCALDOMAIN")
	test := false
	ops := args[1:]
	if len(ops) > 0 && ops[0] == "-t" {
		test = true
		ops = ops[1:]
	}
	if (test && len(ops) != 2) || (!test && len(ops) != 3) {
		return usage(prog)
	}
	if !test && stdoutIsTTY {
		fmt.Fprintf(os.Stderr, "pbs_iff: standard output must not be a terminal\n")
		return 1
	}
	if os.Geteuid() != 0 {
		fmt.Fprintf(os.Stderr, "pbs_iff: warning: not running as root, cannot use a privileged port\n")
	}
	host := ops[0]
	ips, err := pbs.ResolveHost(host)
	if err != nil || len(ips) == 0 {
		fmt.Fprintf(os.Stderr, "pbs_iff: unknown host %s\n", host)
		return 1
	}
	port, err := strconv.Atoi(ops[1])
	if err != nil || port <= 0 || port > 65535 {
		fmt.Fprintf(os.Stderr, "pbs_iff: bad port %s\n", ops[1])
		return 1
	}

	// The port to vouch for: the parent's socket (or its port number).
	clientPort := 0
	if !test {
		n, err := strconv.Atoi(ops[2])
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "pbs_iff: cannot get sockname for socket %s, errno=%d (%s)\n",
				ops[2], int(syscall.EBADF), batchreq.Strerror(int(syscall.EBADF)))
			return 3
		}
		p, serr := socketPort(n)
		switch {
		case serr == nil:
			clientPort = p
		case n >= 1024 && n <= 65535:
			clientPort = n // the port-number form
		default:
			en, _ := serr.(syscall.Errno)
			fmt.Fprintf(os.Stderr, "pbs_iff: cannot get sockname for socket %d, errno=%d (%s)\n",
				n, int(en), batchreq.Strerror(int(en)))
			return 3
		}
	}

	user, err := pbs.CurrentUser()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_iff: cannot get user name for uid %d\n", os.Getuid())
		return 3
	}

	addr := net.JoinHostPort(ips[0].String(), strconv.Itoa(port))
	nc, err := connect(addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_iff: cannot connect to %s:%d - %v\n", host, port, err)
		return 4
	}
	defer nc.Close()
	if test {
		clientPort = nc.LocalAddr().(*net.TCPAddr).Port
	}

	auth := batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, user, &batchreq.AuthenUser{Port: clientPort})
	if _, err := nc.Write(auth.Append(nil)); err != nil {
		fmt.Fprintf(os.Stderr, "pbs_iff: error sending request to server\n")
		return 2
	}
	_ = nc.SetReadDeadline(time.Now().Add(pbs.DefaultTimeout))
	reply, err := batchreq.ReadReply(dis.NewReader(nc))
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_iff: error reading reply from server\n")
		return 1
	}
	if reply.Code != 0 {
		if reply.Text != "" {
			fmt.Fprintf(os.Stderr, "pbs_iff: %s\n", reply.Text)
		} else {
			fmt.Fprintf(os.Stderr, "pbs_iff: pbs_server returned failure code %d\n", reply.Code)
		}
		return 1
	}
	_, _ = nc.Write(pbs.DisconnectRequest("PBS_Server"))
	nc.Close()
	var cred [4]byte
	binary.NativeEndian.PutUint32(cred[:], 0)
	if _, err := stdout.Write(cred[:]); err != nil {
		return 2
	}
	return 0
}

// connect connects from a reserved port (any port when that is not
// permitted), retrying up to 10 times a second apart.
func connect(addr string) (net.Conn, error) {
	var err error
	d := iff.ReservedDialer{Unprivileged: true}
	for try := 0; try < 10; try++ {
		var nc net.Conn
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		nc, err = d.Dial(ctx, addr)
		cancel()
		if err == nil {
			return nc, nil
		}
		time.Sleep(time.Second)
	}
	return nil, err
}

// socketPort returns the local port of socket descriptor fd.
func socketPort(fd int) (int, error) {
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return a.Port, nil
	case *syscall.SockaddrInet6:
		return a.Port, nil
	}
	return 0, syscall.ENOTSOCK
}

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
