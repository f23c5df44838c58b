package compattests

// A fake pbs_server that replays captured server replies to GoPBS client
// commands and checks, connection by connection and turn by turn, that
// the clients send the captured bytes. This proves both "same bytes on the
// wire" and "same output" without any GoPBS server.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopbs/dis"
	"gopbs/internal/capture"
	"gopbs/internal/e2e"
)

// authenPrefix starts every AuthenticateUser request (pbs_iff).
var authenPrefix = []byte("+2+12+49+")

func isIffConn(c *capture.Conn) bool {
	return bytes.HasPrefix(c.Stream(true), authenPrefix)
}

// conversationOf returns the connections a scenario's command made to the
// batch port: its own (from unprivileged ports) and pbs_iff's, in capture
// order; which < 0 selects the main command, otherwise the extra command
// with that index. Connections of daemons (MOM, scheduler) are left out. In
// scenarios with extra commands a client connection belongs to the command
// started nearest to it, and a pbs_iff connection to the command whose port
// it names.
func conversationOf(c *capture.Capture, sc *capture.Scenario, which int) []*capture.Conn {
	var start time.Time
	for _, cn := range c.Conns {
		if start.IsZero() || cn.Start.Before(start) {
			start = cn.Start
		}
	}
	for _, d := range c.Datagrams {
		if start.IsZero() || d.Time.Before(start) {
			start = d.Time
		}
	}
	mine := func(cn *capture.Conn) bool {
		if sc.MainCommandT == nil {
			return true
		}
		// The command started nearest to the connection (not after it,
		// give or take the 50 ms the recorded times may be off).
		t := cn.Start.Sub(start).Seconds()
		best, owner := math.Inf(1), -2
		consider := func(ct float64, who int) {
			if ct <= t+0.05 && math.Abs(ct-t) < best {
				best, owner = math.Abs(ct-t), who
			}
		}
		consider(*sc.MainCommandT, -1)
		for i, ec := range sc.ExtraCommands {
			consider(ec.T, i)
		}
		return owner == which
	}
	ports := map[int]bool{}
	var out []*capture.Conn
	for _, cn := range c.Conns {
		if cn.Server.Port() != 15001 {
			continue
		}
		if isIffConn(cn) {
			if ports[authenPort(cn.Stream(true))] {
				out = append(out, cn)
			}
			continue
		}
		if cn.Client.Port() < 1024 || !mine(cn) {
			continue
		}
		ports[int(cn.Client.Port())] = true
		out = append(out, cn)
	}
	return out
}

// authenPort returns the client port an AuthenUser request names.
func authenPort(b []byte) int {
	r := dis.NewReader(bytes.NewReader(b))
	for k := 0; k < 3; k++ {
		if _, err := r.Uint(); err != nil {
			return -1
		}
	}
	if _, err := r.Str(); err != nil {
		return -1
	}
	p, err := r.Uint()
	if err != nil {
		return -1
	}
	return p
}

// fakeServer replays one scenario's connections on a listener.
type fakeServer struct {
	ln    *net.TCPListener
	conns []*capture.Conn

	mu      sync.Mutex
	diffs   []string
	stopped bool // the command has exited: stop waiting for connections
	// qsubPort is the port "qsub -I" advertised, as the client sent it.
	qsubPort int
	ports    map[uint16]int // captured client port -> actual client port
	cond     *sync.Cond
}

func (f *fakeServer) fail(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.diffs = append(f.diffs, fmt.Sprintf(format, args...))
}

// serve accepts the expected connections in order and replays each; it
// returns when all have been handled or one was not made in time.
func (f *fakeServer) serve() {
	f.cond = sync.NewCond(&f.mu)
	f.ports = map[uint16]int{}
	var wg sync.WaitGroup
	for i, exp := range f.conns {
		f.mu.Lock()
		if f.stopped {
			_ = f.ln.SetDeadline(time.Now().Add(500 * time.Millisecond))
		} else {
			_ = f.ln.SetDeadline(time.Now().Add(15 * time.Second))
		}
		f.mu.Unlock()
		nc, err := f.ln.AcceptTCP()
		if err != nil {
			f.fail("connection %d of %d (%s) was not made: %v", i+1, len(f.conns), describe(exp), err)
			f.mu.Lock()
			f.cond.Broadcast()
			f.mu.Unlock()
			break
		}
		if isIffConn(exp) {
			// The capture users are unprivileged: only a setuid-root
			// pbs_iff can connect from a reserved port.
			if p := nc.RemoteAddr().(*net.TCPAddr).Port; p >= 1024 {
				f.fail("pbs_iff connected from the unprivileged port %d (is it setuid root?)", p)
			}
		} else {
			f.mu.Lock()
			f.ports[exp.Client.Port()] = nc.RemoteAddr().(*net.TCPAddr).Port
			f.cond.Broadcast()
			f.mu.Unlock()
		}
		wg.Add(1)
		go func(i int, exp *capture.Conn, nc *net.TCPConn) {
			defer wg.Done()
			defer nc.Close()
			f.replay(i, exp, nc)
		}(i, exp, nc)
	}
	wg.Wait()
}

// stop tells serve that the command has exited, so that connections not
// yet made never will be.
func (f *fakeServer) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	_ = f.ln.SetDeadline(time.Now().Add(500 * time.Millisecond))
}

// extra reports connections beyond the captured ones, waiting briefly.
func (f *fakeServer) extra() {
	_ = f.ln.SetDeadline(time.Now().Add(100 * time.Millisecond))
	if nc, err := f.ln.AcceptTCP(); err == nil {
		data, _ := readSome(nc, 200*time.Millisecond)
		f.fail("unexpected extra connection, client sent %q", clip(data))
		nc.Close()
	}
}

func describe(c *capture.Conn) string {
	if isIffConn(c) {
		return "pbs_iff"
	}
	return "client port " + strconv.Itoa(int(c.Client.Port()))
}

func (f *fakeServer) replay(i int, exp *capture.Conn, nc *net.TCPConn) {
	for k, turn := range exp.Turns() {
		if !turn.FromClient {
			if _, err := nc.Write(turn.Data); err != nil {
				f.fail("connection %d (%s): writing reply %d: %v", i+1, describe(exp), k, err)
				return
			}
			continue
		}
		want := turn.Data
		if isIffConn(exp) {
			want = f.substitutePorts(want)
		}
		got, err := readN(nc, len(want), 15*time.Second)
		got = f.normalizeInteractive(got, want)
		if !bytes.Equal(got, want) {
			at := 0
			for at < len(got) && at < len(want) && got[at] == want[at] {
				at++
			}
			from := max(0, at-60)
			f.fail("connection %d (%s) turn %d: client bytes differ at offset %d of %d:\n      got  %q\n      want %q (read error %v)",
				i+1, describe(exp), k, at, len(want), clip(got[from:]), clip(want[from:]), err)
			return
		}
	}
	if rest, _ := readSome(nc, 300*time.Millisecond); len(rest) > 0 {
		f.fail("connection %d (%s): client sent extra bytes %q", i+1, describe(exp), clip(rest))
	}
}

// interactiveMark precedes the port of qsub -I's interactive attribute.
var interactiveMark = []byte("11interactive+0+5")

// normalizeInteractive replaces the listening port qsub -I sent (five
// digits, like the captured one) with the captured port, and remembers it.
func (f *fakeServer) normalizeInteractive(got, want []byte) []byte {
	i := bytes.Index(want, interactiveMark)
	j := bytes.Index(got, interactiveMark)
	if i < 0 || j < 0 || j+len(interactiveMark)+5 > len(got) || i+len(interactiveMark)+5 > len(want) {
		return got
	}
	at := j + len(interactiveMark)
	port, err := strconv.Atoi(string(got[at : at+5]))
	if err != nil {
		return got
	}
	f.mu.Lock()
	f.qsubPort = port
	f.mu.Unlock()
	out := append([]byte{}, got...)
	copy(out[at:at+5], want[i+len(interactiveMark):i+len(interactiveMark)+5])
	return out
}

// callBack plays the MOM's side of an interactive job: it connects to the
// port qsub advertised, sends the captured job-id block, checks the
// terminal blocks qsub answers (up to their NUL padding) and sends the
// captured terminal output.
func (f *fakeServer) callBack(mom *capture.Conn) {
	f.mu.Lock()
	port := f.qsubPort
	f.mu.Unlock()
	if port == 0 {
		f.fail("qsub -I advertised no interactive port")
		return
	}
	nc, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		f.fail("cannot connect back to qsub: %v", err)
		return
	}
	defer nc.Close()
	fromMOM := mom.Stream(true)
	fromQsub := mom.Stream(false)
	const idBlock, settings = 1047, 80 + 6 + 80
	if len(fromMOM) < idBlock || len(fromQsub) < settings {
		f.fail("capture lacks the interactive handshake")
		return
	}
	if _, err := nc.Write(fromMOM[:idBlock]); err != nil {
		f.fail("sending the job id to qsub: %v", err)
		return
	}
	got, err := readN(nc, settings, 10*time.Second)
	if err != nil {
		f.fail("reading qsub's terminal settings: %v", err)
		return
	}
	upToNUL := func(b []byte) []byte {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return b[:i]
		}
		return b
	}
	want := fromQsub[:settings]
	for _, part := range [][2]int{{0, 80}, {80, 86}, {86, 166}} {
		g, w := upToNUL(got[part[0]:part[1]]), upToNUL(want[part[0]:part[1]])
		if !bytes.Equal(g, w) {
			f.fail("qsub's terminal block at %d: got %q, want %q", part[0], g, w)
		}
	}
	if _, err := nc.Write(fromMOM[idBlock:]); err != nil {
		f.fail("sending the terminal output: %v", err)
	}
}

// substitutePorts rewrites the captured client port in an AuthenUser body
// to the port of the connection this run made, waiting for that
// connection to be accepted.
func (f *fakeServer) substitutePorts(b []byte) []byte {
	if !bytes.HasPrefix(b, authenPrefix) {
		return b
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for capPort, actual := range f.ports {
			from := append(dis.AppendUint(nil, uint64(capPort)), "+0"...)
			if bytes.HasSuffix(b, from) {
				out := append([]byte{}, b[:len(b)-len(from)]...)
				out = dis.AppendUint(out, uint64(actual))
				return append(out, "+0"...)
			}
		}
		if time.Now().After(deadline) || len(f.diffs) > 0 {
			return b
		}
		f.cond.Wait()
	}
}

func readN(nc net.Conn, n int, timeout time.Duration) ([]byte, error) {
	_ = nc.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, n)
	k, err := io.ReadFull(nc, buf)
	return buf[:k], err
}

func readSome(nc net.Conn, timeout time.Duration) ([]byte, error) {
	_ = nc.SetReadDeadline(time.Now().Add(timeout))
	var out []byte
	buf := make([]byte, 4096)
	for {
		k, err := nc.Read(buf)
		out = append(out, buf[:k]...)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || err == io.EOF {
				return out, nil
			}
			return out, err
		}
	}
}

func clip(b []byte) string {
	if len(b) > 160 {
		return string(b[:160]) + "..."
	}
	return string(b)
}

// defaultPath is the PATH of the first round of captures.
const defaultPath = "/opt/torque/bin:/opt/torque/sbin:/usr/bin:/bin:/usr/sbin:/sbin"

// capturePath returns the PATH the capture's commands ran with, as a
// submission's PBS_O_PATH shows it, or defaultPath.
func capturePath(c *capture.Capture) string {
	for _, cn := range c.Conns {
		s := cn.Stream(true)
		if i := bytes.Index(s, []byte("PBS_O_PATH=")); i >= 0 {
			v := s[i+len("PBS_O_PATH="):]
			if j := bytes.IndexByte(v, ','); j >= 0 {
				return string(v[:j])
			}
		}
	}
	return defaultPath
}

// clientEnv is the environment of the capture's client commands; -V and
// Variable_List reproduce it byte for byte.
func clientEnv(login, home, path string) []string {
	return []string{
		"PATH=" + path,
		"HOME=" + home,
		"USER=" + login,
		"LOGNAME=" + login,
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
	}
}

// ensureUser makes sure a local account exists (creating it without a
// home directory if needed) and returns its uid and gid.
func ensureUser(t *testing.T, name string) (uid, gid int) {
	t.Helper()
	u := e2e.UserWithShell(t, name, "/bin/bash")
	return u.UID, u.GID
}

// captureNamespace prepares the files a command runs with: an /etc/hosts
// naming the capture host, /home with the users' home directories, and a
// UTC /etc/localtime.
type captureNamespace struct {
	hosts string
	homes string
}

func newCaptureNamespace(t *testing.T) *captureNamespace {
	t.Helper()
	e2e.RequireNamespaces(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv(1) not installed")
	}
	dir := t.TempDir()
	ns := &captureNamespace{hosts: e2e.HostsFile(t, captureHost), homes: filepath.Join(dir, "home")}
	if err := os.MkdirAll(ns.homes, 0o755); err != nil {
		t.Fatal(err)
	}
	return ns
}

// home returns the directory that appears as /home/<login>, creating it.
func (ns *captureNamespace) home(t *testing.T, login string, uid, gid int) string {
	t.Helper()
	d := filepath.Join(ns.homes, login)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chown(d, uid, gid)
	return d
}

// command returns a command running path with args as login (uid, gid;
// root runs unchanged) inside a new UTS and mount namespace where the host
// name is the capture host, /home is ns.homes and the time zone is UTC,
// with the working directory the user's home.
func (ns *captureNamespace) command(login string, uid, gid int, path string, args ...string) *exec.Cmd {
	return ns.commandPath(login, uid, gid, defaultPath, path, args...)
}

// commandPath is command with the PATH of the environment given.
func (ns *captureNamespace) commandPath(login string, uid, gid int, envPath, path string, args ...string) *exec.Cmd {
	home := "/home/" + login
	if login == "root" {
		home = "/root"
	}
	script := `hostname "$1" && mount --bind "$2" /etc/hosts && mount --bind "$3" /home || exit 99
if [ -e /usr/share/zoneinfo/Etc/UTC ] && [ -e /etc/localtime ]; then mount --bind /usr/share/zoneinfo/Etc/UTC /etc/localtime; fi
cd "$4" || exit 99
shift 4
exec "$@"`
	argv := []string{"--uts", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
		captureHost, ns.hosts, ns.homes, home}
	if login != "root" {
		argv = append(argv, "setpriv", "--reuid="+strconv.Itoa(uid), "--regid="+strconv.Itoa(gid), "--init-groups", "--")
	}
	// env -i gives the command exactly the capture's environment, in its
	// order (the shell would add PWD and reorder it).
	argv = append(argv, "env", "-i")
	argv = append(argv, clientEnv(login, home, envPath)...)
	argv = append(argv, path)
	argv = append(argv, args...)
	cmd := exec.Command("unshare", argv...)
	cmd.Env = clientEnv(login, home, envPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// clientCommands are the programs this suite builds.
var clientCommands = []string{
	"pbs_iff", "qsub", "qstat", "qdel", "qhold", "qrls", "qalter", "qmove", "qorder",
	"qrun", "qrerun", "qsig", "qmsg", "qchkpt", "qselect", "qenable", "qdisable",
	"qstart", "qstop", "qterm", "qmgr", "pbsnodes", "momctl", "tracejob", "printjob",
}
