package momlog

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"gopbs/internal/logline"
)

// DefaultSyslogSocket is the local system logger's socket.
const DefaultSyslogSocket = "/dev/log"

// Syslog severities and the daemon facility (RFC 3164).
const (
	syslogDaemon = 3 << 3
	syslogErr    = 3
	syslogNotice = 5
)

// Syslog copies a daemon's important log lines to the system logger, as
// TORQUE's pbs_mom does besides its own log files ("NOTE:  syslog
// enabled" in momctl -d): errors at severity LOG_ERR, system and
// administrative events at LOG_NOTICE, facility LOG_DAEMON. Like
// syslog(3) it never fails its caller: it connects to the socket when a
// line is sent, reconnects after an error, and drops lines while no
// system logger listens. A Syslog is safe for concurrent use.
type Syslog struct {
	mu     sync.Mutex
	socket string
	tag    string
	pid    int
	conn   net.Conn
}

// NewSyslog returns a Syslog sending to socket (DefaultSyslogSocket when
// "") with tag as the program name of its messages.
func NewSyslog(socket, tag string) *Syslog {
	if socket == "" {
		socket = DefaultSyslogSocket
	}
	return &Syslog{socket: socket, tag: tag, pid: os.Getpid()}
}

// severity returns the syslog severity of an event type and whether the
// event goes to syslog at all.
func severity(event int) (int, bool) {
	switch {
	case event&logline.EventError != 0:
		return syslogErr, true
	case event&(logline.EventSystem|logline.EventAdmin) != 0:
		return syslogNotice, true
	}
	return 0, false
}

// send writes one message at time t. Errors drop the message.
func (s *Syslog) send(t time.Time, sev int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := fmt.Sprintf("<%d>%s %s[%d]: %s", syslogDaemon|sev, t.Format(time.Stamp), s.tag, s.pid, msg)
	for attempt := 0; attempt < 2; attempt++ {
		if s.conn == nil {
			c, err := net.Dial("unixgram", s.socket)
			if err != nil {
				return // no system logger: drop, as syslog(3) does
			}
			s.conn = c
		}
		s.conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)) // never stall the log for long
		if _, err := s.conn.Write([]byte(line)); err == nil {
			return
		}
		s.conn.Close() // the logger restarted: reconnect once
		s.conn = nil
	}
}

// Close closes the connection to the system logger.
func (s *Syslog) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close()
	s.conn = nil
	return err
}

// syslogText is the message of a record: its class, object and text as
// in the log file, on one line.
func syslogText(class Class, object, text string) string {
	return class.String() + ";" + object + ";" + strings.ReplaceAll(text, "\n", " ")
}
