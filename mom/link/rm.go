package link

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/config"
	"gopbs/mom/momlog"
	"gopbs/mom/sysinfo"
	"gopbs/momproto"
	"gopbs/rpp"

	"golang.org/x/sys/unix"
)

// acceptRPP serves the streams others open to the RPP port.
func (m *Mom) acceptRPP(ctx context.Context, ep *rpp.Endpoint) {
	for {
		s, err := ep.Accept(ctx)
		if err != nil {
			return
		}
		m.goFunc(func() { m.handleStream(ctx, s) })
	}
}

// handleStream dispatches each message of an accepted stream by its
// protocol number: RM (1), IM (3, through Options.IM) and IS (4).
func (m *Mom) handleStream(ctx context.Context, s *rpp.Stream) {
	handedOff := false
	defer func() {
		if !handedOff {
			s.Close()
			m.sisterStreamEnded(s) // a sister job's mother superior went away
		}
	}()
	peer := s.RemoteAddr()
	for {
		msg, err := s.Recv(ctx)
		if err != nil {
			return
		}
		proto, err := momproto.Protocol(msg)
		if err != nil {
			m.log.Error(0, err.Error(), "do_rpp", "bad message from "+peer.String())
			return
		}
		switch proto {
		case momproto.RM_PROTOCOL:
			reply, keep := m.rmMessage(ctx, peer, msg)
			if reply != nil {
				if err := s.Send(reply); err != nil {
					return
				}
			}
			if !keep {
				return
			}
		case momproto.IS_PROTOCOL:
			switch m.isIncoming(ctx, s, msg) {
			case isStop:
				return
			case isHandedOff:
				handedOff = true
				return
			}
		case momproto.IM_PROTOCOL:
			if !m.imMessage(ctx, s, msg) {
				return
			}
		default:
			m.log.Error(0, "", "do_rpp", fmt.Sprintf("unknown protocol %d from %v", proto, peer))
			return
		}
	}
}

// rmMessage serves one RM request message and returns the reply (nil:
// none) and whether the conversation may go on.
func (m *Mom) rmMessage(ctx context.Context, peer netip.AddrPort, msg []byte) ([]byte, bool) {
	req, err := momproto.DecodeRMRequest(msg)
	if err != nil && (req == nil || req.Command != momproto.RM_CMD_REQUEST) {
		m.logErr("rm_request", err, "")
		return nil, false
	}
	full := peer.Port() < 1024 && m.Trusted(peer.Addr())
	restricted := !full && m.restricted(ctx, peer.Addr())
	if !full && !restricted {
		m.log.Error(0, "Success (0)", "rm_request",
			fmt.Sprintf("bad attempt to connect - unauthorized (port: %d)", peer.Port()))
		m.mu.Lock()
		m.lastBad = peer.String()
		m.mu.Unlock()
		return nil, false
	}
	switch req.Command {
	case momproto.RM_CMD_CLOSE:
		return nil, true // the peer's GOODBYE follows
	case momproto.RM_CMD_REQUEST:
		rep := momproto.RMReply{Code: momproto.RM_RSP_OK}
		for _, line := range req.Lines {
			rep.Answers = append(rep.Answers, m.rmAnswer(ctx, line, restricted))
		}
		return rep.Append(nil), true
	case momproto.RM_CMD_CONFIG:
		if restricted || !m.conf().RemoteReconfig {
			return nil, false
		}
		code := momproto.RM_RSP_OK
		if err := m.reconfigure(req.Lines); err != nil {
			m.logErr("rm_request", err, "reconfig")
			code = momproto.RM_RSP_ERROR
		}
		return (&momproto.RMReply{Code: code}).Append(nil), true
	case momproto.RM_CMD_SHUTDOWN:
		if restricted {
			return nil, false
		}
		if m.opt.Shutdown != nil {
			defer time.AfterFunc(100*time.Millisecond, m.opt.Shutdown)
		}
		return (&momproto.RMReply{Code: momproto.RM_RSP_OK}).Append(nil), true
	}
	return (&momproto.RMReply{Code: momproto.RM_RSP_ERROR}).Append(nil), true
}

// restricted reports whether addr's host name matches a $restricted
// pattern.
func (m *Mom) restricted(ctx context.Context, addr netip.Addr) bool {
	if len(m.conf().Restricted) == 0 {
		return false
	}
	names, err := net.DefaultResolver.LookupAddr(ctx, addr.String())
	if err != nil {
		return false
	}
	for _, n := range names {
		n = strings.TrimSuffix(n, ".")
		for _, pat := range m.conf().Restricted {
			if ok, _ := filepath.Match(pat, n); ok {
				return true
			}
		}
	}
	return false
}

// rmAnswer answers one request line (spec 10 §10.4).
func (m *Mom) rmAnswer(ctx context.Context, line string, restricted bool) string {
	name, _, _ := strings.Cut(line, "[")
	lower := strings.ToLower(name)
	setting, value, hasValue := strings.Cut(line, "=")
	settingLower := strings.ToLower(setting)
	switch {
	case lower == "cycle":
		m.Cycle()
		m.log.Record(logline.EventSystem, momlog.ClassNA, "rm_request", "reporting cycle forced")
		return "cycle forced"
	case strings.HasPrefix(lower, "diag"):
		level, _ := strconv.Atoi(strings.TrimPrefix(lower, "diag"))
		report := m.diag(level)
		m.log.Record(logline.EventSystem, momlog.ClassNA, "rm_request", "internal diagnostics complete")
		return report
	case lower == "clearmsg":
		m.mu.Lock()
		m.message = ""
		m.mu.Unlock()
		return "messages cleared"
	case settingLower == "clearjob":
		return m.clearJob(value)
	case settingLower == "status_update_time":
		return m.durSetting(setting, func(c *config.Config) *time.Duration { return &c.StatusUpdateTime }, value, hasValue)
	case settingLower == "check_poll_time":
		return m.durSetting(setting, func(c *config.Config) *time.Duration { return &c.CheckPollTime }, value, hasValue)
	case settingLower == "jobstartblocktime":
		return m.durSetting(setting, func(c *config.Config) *time.Duration { return &c.JobStartBlockTime }, value, hasValue)
	case settingLower == "loglevel":
		if n, err := strconv.Atoi(value); hasValue && err == nil {
			m.updateConf(func(c *config.Config) { c.LogLevel = n })
		}
		return fmt.Sprintf("%s=%d", setting, m.conf().LogLevel)
	case settingLower == "down_on_error":
		if hasValue {
			m.updateConf(func(c *config.Config) { c.DownOnError = config.ParseBool(value) })
		}
		return fmt.Sprintf("%s=%d", setting, b2i(m.conf().DownOnError))
	case settingLower == "enablemomrestart":
		if hasValue {
			m.updateConf(func(c *config.Config) { c.EnableMomRestart = config.ParseBool(value) })
		}
		return fmt.Sprintf("%s=%d", setting, b2i(m.conf().EnableMomRestart))
	case settingLower == "rcpcmd":
		return fmt.Sprintf("%s=%s %s", setting, m.conf().RcpCmd, m.conf().RcpArgs)
	case lower == "version":
		return line + "=" + Version
	case lower == "configversion":
		if m.conf().ConfigVersion == "" {
			return fmt.Sprintf("%s=? %d", line, sysinfo.RM_ERR_UNKNOWN)
		}
		return line + "=" + m.conf().ConfigVersion
	}
	if restricted {
		// Only dynamically computed values, never static config values.
		for _, r := range m.conf().Resources {
			if r.Name == name {
				return fmt.Sprintf("%s=? %d", line, sysinfo.RM_ERR_UNKNOWN)
			}
		}
	}
	v, rmerr := m.resource(ctx, line)
	if rmerr != 0 {
		return fmt.Sprintf("%s=? %d", line, rmerr)
	}
	return line + "=" + v
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (m *Mom) durSetting(name string, field func(*config.Config) *time.Duration, value string, set bool) string {
	if n, err := strconv.Atoi(value); set && err == nil && n > 0 {
		m.updateConf(func(c *config.Config) { *field(c) = time.Duration(n) * time.Second })
	}
	return fmt.Sprintf("%s=%d", name, int(*field(m.conf())/time.Second))
}

func (m *Mom) clearJob(which string) string {
	m.mu.Lock()
	var victims []*job
	for id, j := range m.jobs {
		if which == "all" || id == which {
			victims = append(victims, j)
		}
	}
	m.mu.Unlock()
	if which == "" {
		return "invalid clearjob request"
	}
	var out []string
	for _, j := range victims {
		out = append(out, "clearing job "+j.id)
		m.purge(j)
	}
	out = append(out, "clear completed")
	return strings.Join(out, "\n")
}

// diag builds the momctl -d report (spec 10 §10.4, capture 23).
func (m *Mom) diag(level int) string {
	now := m.opt.Now()
	var b strings.Builder
	fmt.Fprintf(&b, "\nHost: %s/%s   Version: %s   PID: %d\n", m.opt.Host, m.opt.Host, Version, m.pid)
	m.mu.Lock()
	servers := append([]*isClient(nil), m.servers...)
	lastBatch, lastBatchName := m.lastBatch, m.lastBatchName
	m.mu.Unlock()
	for i, c := range servers {
		st := c.stats()
		if lastBatch.After(st.lastFrom) {
			st.lastFrom, st.lastFromWhat = lastBatch, lastBatchName
		}
		fmt.Fprintf(&b, "Server[%d]: %s (%s)\n", i, st.name, st.addr)
		if level >= 1 {
			fmt.Fprintf(&b, "  Init Msgs Received:     %d hellos/%d cluster-addrs\n", st.hellosIn, st.clusterAddrs)
			fmt.Fprintf(&b, "  Init Msgs Sent:         %d hellos\n", st.hellosOut)
			if !st.lastFrom.IsZero() {
				fmt.Fprintf(&b, "  Last Msg From Server:   %d seconds (%s)\n", int(now.Sub(st.lastFrom)/time.Second), st.lastFromWhat)
			} else {
				b.WriteString("  WARNING:  no messages received from server\n")
			}
			if !st.lastTo.IsZero() {
				fmt.Fprintf(&b, "  Last Msg To Server:     %d seconds\n", int(now.Sub(st.lastTo)/time.Second))
			} else {
				b.WriteString("  WARNING:  no messages sent to server\n")
			}
		}
	}
	fmt.Fprintf(&b, "HomeDirectory:          %s\n", filepath.Join(m.opt.Home, "mom_priv"))
	if level >= 1 {
		spool := filepath.Join(m.opt.Home, "spool") + "/"
		if free, err := freeBlocks(spool); err == nil {
			fmt.Fprintf(&b, "stdout/stderr spool directory: '%s' (%d blocks available)\n", spool, free)
		}
	}
	if m.opt.Log.SyslogEnabled() {
		b.WriteString("NOTE:  syslog enabled\n")
	}
	if m.conf().ConfigVersion != "" {
		fmt.Fprintf(&b, "ConfigVersion:          %s\n", m.conf().ConfigVersion)
	}
	fmt.Fprintf(&b, "MOM active:             %d seconds\n", int(now.Sub(m.start)/time.Second))
	if level >= 1 {
		fmt.Fprintf(&b, "Check Poll Time:        %d seconds\n", int(m.conf().CheckPollTime/time.Second))
		fmt.Fprintf(&b, "Server Update Interval: %d seconds\n", int(m.conf().StatusUpdateTime/time.Second))
	}
	m.mu.Lock()
	msg, bad := m.message, m.lastBad
	m.mu.Unlock()
	if msg != "" {
		fmt.Fprintf(&b, "MOM Message:            %s\n", msg)
	}
	if bad != "" {
		fmt.Fprintf(&b, "WARNING:  server not authorized (%s)\n", bad)
	}
	if level >= 1 {
		fmt.Fprintf(&b, "LogLevel:               %d (use SIGUSR1/SIGUSR2 to adjust)\n", m.conf().LogLevel)
		b.WriteString("Communication Model:    RPP\n")
		if m.opt.MemLocked {
			b.WriteString("MemLocked:              TRUE  (mlock)\n")
		} else {
			b.WriteString("MemLocked:              FALSE\n")
		}
		fmt.Fprintf(&b, "TCP Timeout:            %d seconds\n", int(m.tcpTimeout()/time.Second))
	}
	if level >= 2 {
		prolog := filepath.Join(m.opt.Home, "mom_priv", "prologue")
		fmt.Fprintf(&b, "Prolog:                 %s (%s)\n", prolog, enabledWord(prolog))
		fmt.Fprintf(&b, "Alarm Time:             0 of %d seconds\n", int(m.opt.AlarmTime/time.Second))
		fmt.Fprintf(&b, "Trusted Client List:    %s\n", m.trustedList())
		rcp := m.conf().RcpCmd
		if p, err := exec.LookPath(rcp); err == nil {
			rcp = p
		}
		fmt.Fprintf(&b, "Copy Command:           %s %s\n", rcp, m.conf().RcpArgs)
	}
	var lines []string
	for _, j := range m.listedJobs() {
		lines = append(lines, fmt.Sprintf("job[%s]  state=%s  sidlist=%d", j.id, j.state, j.sid))
	}
	if len(lines) == 0 {
		b.WriteString("NOTE:  no local jobs detected\n")
	} else {
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	b.WriteString("\ndiagnostics complete\n")
	return b.String()
}

func stageName(s stage) string {
	return [...]string{"TRANSIN", "TRANSICM", "RUNNING", "SUSPEND", "EXITING", "EXITED"}[s]
}

func enabledWord(path string) string {
	if fileExists(path) {
		return "enabled"
	}
	return "disabled"
}

// serveRMConn serves RM requests on a TCP connection: each read of the
// peer's bytes is one message (the list ends where the received bytes
// end, spec 10 §10.1). TM (protocol 2) is refused.
func (m *Mom) serveRMConn(ctx context.Context, c net.Conn) {
	peer, _ := netip.ParseAddrPort(c.RemoteAddr().String())
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 65536)
	for {
		timeout := m.tcpTimeout()
		c.SetReadDeadline(time.Now().Add(timeout))
		n, err := c.Read(tmp)
		if n == 0 && err != nil {
			return
		}
		buf = append(buf[:0], tmp[:n]...)
		// Gather what follows immediately: a request may span segments.
		for {
			c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			n, err := c.Read(tmp)
			buf = append(buf, tmp[:n]...)
			if err != nil || len(buf) > 1<<20 {
				break
			}
		}
		proto, err := momproto.Protocol(buf)
		if err == nil && proto == momproto.TM_PROTOCOL {
			m.serveTM(ctx, c, buf) // a job's task (tm.go)
			return
		}
		if err != nil || proto != momproto.RM_PROTOCOL {
			m.log.Record(logline.EventDebug, momlog.ClassRequest, "tcp_request",
				fmt.Sprintf("protocol %d from %v not supported", proto, peer))
			return
		}
		reply, keep := m.rmMessage(ctx, peer, buf)
		if reply != nil {
			c.SetWriteDeadline(time.Now().Add(timeout))
			if _, err := c.Write(reply); err != nil {
				return
			}
		}
		if !keep {
			return
		}
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

func freeBlocks(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail, nil
}

// reconfigure serves RM_CMD_CONFIG: text after "CONFIG:" replaces the
// config file, which is then read again.
func (m *Mom) reconfigure(lines []string) error {
	name := m.opt.ConfigFile
	if name == "" {
		return fmt.Errorf("no config file")
	}
	if len(lines) > 0 {
		if _, text, ok := strings.Cut(lines[0], "CONFIG:"); ok {
			if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
				return err
			}
		}
	}
	cfg, err := config.ParseFile(name)
	if err != nil {
		return err
	}
	m.SetConfig(cfg)
	if m.opt.OnReconfig != nil {
		m.opt.OnReconfig(cfg)
	}
	return nil
}
