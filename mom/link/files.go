package link

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/mom/jobexec"
)

// chunkSize is the largest MvJobFile chunk (spec 10 §6.3).
const chunkSize = 65536

func (m *Mom) reqRerun(bc *batchConn, req *batchreq.Request) {
	id := req.Body.(*batchreq.JobID).ID
	m.returnFiles(bc, id, true, true)
}

func (m *Mom) reqReturnFiles(bc *batchConn, req *batchreq.Request) {
	b := req.Body.(*batchreq.ReturnFiles)
	m.returnFiles(bc, b.JobID, b.ReturnStdout != 0, b.ReturnStderr != 0)
}

// returnFiles sends the spooled stdout/stderr back to the server with
// MvJobFile on a new connection and removes them here (spec 10 §8.6).
func (m *Mom) returnFiles(bc *batchConn, id string, stdout, stderr bool) {
	j := m.lookup(id)
	if j == nil {
		bc.errorReply(batchreq.PBSE_UNKJOBID, "")
		return
	}
	server := j.server
	if !server.IsValid() {
		server = bc.peer.Addr()
	}
	port := serverPortOf(j.attrs, m.opt.ServerPort)
	var sent []string
	err := func() error {
		ctx, cancel := context.WithTimeout(bc.ctx, m.tcpTimeout())
		defer cancel()
		c, err := m.opt.Dial(ctx, netip.AddrPortFrom(server, uint16(port)))
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(m.tcpTimeout()))
		w := dis.NewWriter(c)
		r := dis.NewReader(c)
		for _, f := range []struct {
			want   bool
			suffix string
			typ    int
		}{{stdout, ".OU", batchreq.StdOut}, {stderr, ".ER", batchreq.StdErr}} {
			if !f.want {
				continue
			}
			name := filepath.Join(m.opt.Home, "spool", j.prefix+f.suffix)
			data, err := os.ReadFile(name)
			if err != nil {
				continue // nothing spooled
			}
			for seq := 0; seq == 0 || len(data) > 0; seq++ {
				n := min(len(data), chunkSize)
				req := batchreq.NewRequest(batchreq.PBS_BATCH_MvJobFile, "pbs_mom",
					&batchreq.JobFile{Seq: seq, FileType: f.typ, JobID: id, Data: data[:n]})
				data = data[n:]
				req.Encode(w)
				if err := w.Flush(); err != nil {
					return err
				}
				rep, err := batchreq.ReadReply(r)
				if err != nil {
					return err
				}
				if rep.Code != 0 {
					return fmt.Errorf("server rejected MvJobFile with %d", rep.Code)
				}
			}
			sent = append(sent, name)
		}
		return nil
	}()
	if err != nil {
		m.logErr("return_files", err, id)
		bc.reply(batchreq.SystemErrorReply("pbs_mom", errnoOf(err), ""))
		return
	}
	for _, name := range sent {
		os.Remove(name)
	}
	bc.reply(batchreq.NullReply())
}

func (m *Mom) tcpTimeout() time.Duration {
	if m.conf().Timeout > 0 {
		return m.conf().Timeout
	}
	return 60 * time.Second
}

func (m *Mom) reqCopyFiles(bc *batchConn, req *batchreq.Request) {
	body := req.Body.(*batchreq.CopyFiles)
	cred, err := jobexec.LookupUser(body.ExecUser, body.ExecGroup)
	if err != nil {
		bc.reply(batchreq.TextReply(batchreq.PBSE_BADUSER, "Bad UID for job execution"))
		return
	}
	var failures []string
	for _, p := range body.Pairs {
		local := m.localName(p)
		host, remote := splitRemote(p.Remote)
		var src, dst string
		if body.Direction == batchreq.STAGE_DIR_IN || body.Direction == batchreq.CKPT_DIR_IN {
			src, dst = m.copySource(host, remote), local
		} else {
			src, dst = local, m.copySource(host, remote)
		}
		if sameFile(cred, src, dst) {
			continue // already where it belongs (e.g. written in place): nothing to copy or remove
		}
		out, err := m.copyFile(bc.ctx, cred, src, dst)
		if err != nil {
			failures = append(failures, fmt.Sprintf("Unable to copy file %s to %s\n%s", src, p.Remote, out))
			if body.Direction == batchreq.STAGE_DIR_OUT && p.Flag == batchreq.STDJOBFILE {
				os.Rename(local, filepath.Join(m.opt.Home, "undelivered", filepath.Base(local)))
			}
			continue
		}
		if body.Direction == batchreq.STAGE_DIR_OUT && p.Flag == batchreq.STDJOBFILE {
			os.Remove(local) // delivered
		}
	}
	if len(failures) > 0 {
		bc.reply(batchreq.TextReply(batchreq.PBSE_NOCOPYFILE, strings.Join(failures, "\n")))
		return
	}
	bc.reply(batchreq.NullReply())
}

func (m *Mom) reqDelFiles(bc *batchConn, req *batchreq.Request) {
	body := req.Body.(*batchreq.CopyFiles)
	cred, err := jobexec.LookupUser(body.ExecUser, body.ExecGroup)
	if err != nil {
		bc.reply(batchreq.TextReply(batchreq.PBSE_BADUSER, "Bad UID for job execution"))
		return
	}
	var failures []string
	for _, p := range body.Pairs {
		name := m.localName(p)
		if out, err := m.runAs(bc.ctx, cred, "/bin/rm", "-rf", name); err != nil {
			failures = append(failures, fmt.Sprintf("Unable to delete file %s\n%s", name, out))
		}
	}
	if len(failures) > 0 {
		bc.reply(batchreq.TextReply(batchreq.PBSE_NOCOPYFILE, strings.Join(failures, "\n")))
		return
	}
	bc.reply(batchreq.NullReply())
}

// localName maps a pair's local file: spool file names of standard job
// files live in PBS_HOME/spool.
func (m *Mom) localName(p batchreq.FilePair) string {
	if p.Flag == batchreq.STDJOBFILE && !strings.HasPrefix(p.Local, "/") {
		return filepath.Join(m.opt.Home, "spool", p.Local)
	}
	return p.Local
}

func splitRemote(s string) (host, file string) {
	if i := strings.IndexByte(s, ':'); i >= 0 && !strings.Contains(s[:i], "/") {
		return s[:i], s[i+1:]
	}
	return "", s
}

// copySource returns the path cp can use for host:file when the file is
// local (this host, localhost, or a $usecp rule), else "host:file" for the
// remote copy command.
func (m *Mom) copySource(host, file string) string {
	if host == "" || m.isLocalHost(host) {
		return file
	}
	for _, u := range m.conf().UseCp {
		if ok, _ := path.Match(u.HostPattern, host); (ok || u.HostPattern == host || strings.HasSuffix(host, strings.TrimPrefix(u.HostPattern, "*"))) && strings.HasPrefix(file, u.From) {
			return u.To + strings.TrimPrefix(file, u.From)
		}
	}
	return host + ":" + file
}

func (m *Mom) isLocalHost(host string) bool {
	short := func(s string) string {
		if i := strings.IndexByte(s, '.'); i > 0 {
			return s[:i]
		}
		return s
	}
	if host == "localhost" || strings.EqualFold(host, m.opt.Host) || strings.EqualFold(short(host), short(m.opt.Host)) {
		return true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.IsLoopback() || m.Trusted(a) && a.IsLoopback()
	}
	return false
}

// copyFile copies src to dst as the job's user, with cp for local paths and
// the configured remote copy command otherwise. It retries once.
func (m *Mom) copyFile(ctx context.Context, cred *jobexec.Credentials, src, dst string) (string, error) {
	var out string
	var err error
	for try := 0; try < 2; try++ {
		if strings.Contains(src, ":") || strings.Contains(dst, ":") {
			args := append(strings.Fields(m.conf().RcpArgs), src, dst)
			out, err = m.runAs(ctx, cred, m.conf().RcpCmd, args...)
		} else {
			out, err = m.runAs(ctx, cred, "/bin/cp", "-rp", src, dst)
		}
		if err == nil {
			return "", nil
		}
	}
	return out, err
}

// runAs runs a command as the user, in the user's home directory, and
// returns its combined output.
func (m *Mom) runAs(ctx context.Context, cred *jobexec.Credentials, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	groups := make([]uint32, len(cred.Groups))
	copy(groups, cred.Groups)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: cred.UID, Gid: cred.GID, Groups: groups}}
	cmd.Dir = cred.Home
	if _, err := os.Stat(cmd.Dir); err != nil {
		cmd.Dir = "/"
	}
	cmd.Env = []string{"HOME=" + cred.Home, "USER=" + cred.Name, "LOGNAME=" + cred.Name, "PATH=/usr/local/bin:/usr/bin:/bin"}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// sameFile reports whether two local paths (relative ones are relative to
// the user's home, where copies run) name the same existing file.
func sameFile(cred *jobexec.Credentials, a, b string) bool {
	if strings.Contains(a, ":") || strings.Contains(b, ":") {
		return false
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cred.Home, p)
	}
	sa, err1 := os.Stat(abs(a))
	sb, err2 := os.Stat(abs(b))
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
