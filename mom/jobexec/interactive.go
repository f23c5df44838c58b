package jobexec

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Sizes of the blocks exchanged with qsub -I before the terminal session
// (capture 81): MOM sends the job id NUL-padded to 1047 bytes; qsub answers
// with 80 bytes "TERM=<value>", 6 control characters and 80 bytes
// "WINSIZE rows,cols,xpixel,ypixel".
const (
	interJobIDSize   = 1047
	interTermSize    = 80
	interControlSize = 6
	interWinSize     = 80
)

// interactiveSession is the terminal of an interactive job: qsub's socket
// relayed to the master side of a pseudo-terminal.
type interactiveSession struct {
	conn    net.Conn
	master  *os.File
	slave   *os.File // closed in MOM once the shell started
	name    string   // /dev/pts/N
	term    string   // TERM=... from qsub ("" if none)
	drained chan struct{}
}

// interactivePort returns the qsub port of an interactive job (0 for batch
// jobs).
func (j *Job) interactivePort() int {
	return j.InteractivePort
}

// openInteractive connects back to qsub, performs the handshake and
// allocates the pseudo-terminal.
func (e *Engine) openInteractive(ctx context.Context, r *runningJob) (*interactiveSession, error) {
	j := r.job
	host, _ := j.Var("PBS_O_HOST")
	if host == "" {
		return nil, fmt.Errorf("interactive job without PBS_O_HOST")
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(j.interactivePort())))
	if err != nil {
		return nil, fmt.Errorf("cannot connect to qsub: %w", err)
	}
	s := &interactiveSession{conn: conn, drained: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			s.close()
		}
	}()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	id := make([]byte, interJobIDSize)
	copy(id, j.ID)
	if _, err := conn.Write(id); err != nil {
		return nil, fmt.Errorf("send job id to qsub: %w", err)
	}
	term := make([]byte, interTermSize)
	cc := make([]byte, interControlSize)
	win := make([]byte, interWinSize)
	for _, b := range [][]byte{term, cc, win} {
		if _, err := io.ReadFull(conn, b); err != nil {
			return nil, fmt.Errorf("read terminal settings from qsub: %w", err)
		}
	}
	_ = conn.SetDeadline(time.Time{})
	if t := cString(term); strings.HasPrefix(t, "TERM=") {
		s.term = t
	}
	ws := parseWinsize(cString(win))
	if err := s.openPty(r.cred, cc, ws); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// parseWinsize parses "WINSIZE rows,cols,xpixel,ypixel".
func parseWinsize(s string) unix.Winsize {
	ws := unix.Winsize{Row: 24, Col: 80}
	f := strings.Split(strings.TrimSpace(strings.TrimPrefix(s, "WINSIZE")), ",")
	vals := make([]uint16, 4)
	for i := 0; i < len(f) && i < 4; i++ {
		if n, err := strconv.ParseUint(strings.TrimSpace(f[i]), 10, 16); err == nil {
			vals[i] = uint16(n)
		}
	}
	if vals[0] > 0 && vals[1] > 0 {
		ws = unix.Winsize{Row: vals[0], Col: vals[1], Xpixel: vals[2], Ypixel: vals[3]}
	}
	return ws
}

// openPty allocates a pseudo-terminal owned by the user with qsub's
// window size and control characters (VINTR, VQUIT, VERASE, VKILL, VEOF,
// VSUSP).
func (s *interactiveSession) openPty(cred *Credentials, cc []byte, ws unix.Winsize) error {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("open pty master: %w", err)
	}
	s.master = master
	mfd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		return fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	if err != nil {
		return fmt.Errorf("pty number: %w", err)
	}
	s.name = "/dev/pts/" + strconv.Itoa(n)
	slave, err := os.OpenFile(s.name, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", s.name, err)
	}
	s.slave = slave
	sfd := int(slave.Fd())
	if os.Getuid() == 0 {
		if err := os.Chown(s.name, int(cred.UID), -1); err != nil {
			return fmt.Errorf("chown %s: %w", s.name, err)
		}
		_ = os.Chmod(s.name, 0o620)
	}
	_ = unix.IoctlSetWinsize(sfd, unix.TIOCSWINSZ, &ws)
	if t, err := unix.IoctlGetTermios(sfd, unix.TCGETS); err == nil && len(cc) == interControlSize {
		for i, idx := range []int{unix.VINTR, unix.VQUIT, unix.VERASE, unix.VKILL, unix.VEOF, unix.VSUSP} {
			t.Cc[idx] = cc[i]
		}
		_ = unix.IoctlSetTermios(sfd, unix.TCSETS, t)
	}
	return nil
}

// relay copies between qsub's socket and the pty master until the shell's
// side is gone.
func (s *interactiveSession) relay() {
	go func() { _, _ = io.Copy(s.master, s.conn) }()
	go func() {
		_, _ = io.Copy(s.conn, s.master)
		close(s.drained)
	}()
}

// finish waits briefly for the remaining terminal output and closes the
// connection to qsub (qsub then prints "job … completed").
func (s *interactiveSession) finish() {
	select {
	case <-s.drained:
	case <-time.After(time.Second):
	}
	s.close()
}

func (s *interactiveSession) close() {
	if s.slave != nil {
		s.slave.Close()
	}
	if s.master != nil {
		s.master.Close()
	}
	if s.conn != nil {
		s.conn.Close()
	}
}
