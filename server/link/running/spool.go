package running

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/link/mom"
	"gopbs/server/state"
)

// Output of rerun jobs (spec 10 §6.1 step c, §8.6): when a job that ran
// on a MOM other than the server's host is rerun, the server asks that
// MOM for the job's spooled stdout and stderr (Rerun), which the MOM
// returns with MvJobFile into the server's spool directory; the next
// launch of the job on a remote MOM sends them on (MvJobFile before
// RdytoCommit), so the rerun job's output continues the first run's.

// spoolSuffixes maps MvJobFile file types to spool file suffixes, in the
// order a launch sends them.
var spoolSuffixes = []struct {
	typ    int
	suffix string
}{{batchreq.StdOut, ".OU"}, {batchreq.StdErr, ".ER"}, {batchreq.Chkpt, ".CK"}}

// spoolPath returns the server's spool file of a job prefix and file
// type, "" for a type that has none.
func (l *Link) spoolPath(prefix string, typ int) string {
	for _, f := range spoolSuffixes {
		if f.typ == typ {
			return filepath.Join(l.cfg.Home, "spool", prefix+f.suffix)
		}
	}
	return ""
}

// onServerHost reports whether a MOM host is the server's own host: an
// address of the host is one of the server name's.
func (l *Link) onServerHost(host string) bool {
	own := l.Resolve(l.cfg.Name)
	for _, a := range l.Resolve(host) {
		if slices.Contains(own, a) {
			return true
		}
	}
	return false
}

// MvJobFile stores one chunk of a job's stdout, stderr or checkpoint
// file that its mother superior returns (spec 10 §8.6): chunk 0 creates
// the spool file, later chunks append.
func (l *Link) MvJobFile(c *handler.Conn, req *batchreq.Request) {
	h := l.host
	body := req.Body.(*batchreq.JobFile)
	if !c.Asker.Privileged {
		c.Reject(batchreq.PBSE_PERM, "")
		return
	}
	h.RLock()
	j := h.FindJob(body.JobID)
	var ms, prefix string
	if j != nil {
		ms = state.MotherSuperior(j.Attrs.Get(pbsattr.JobExecHost))
		if prefix = j.Attrs.Get(pbsattr.JobHashname); prefix == "" {
			prefix = filePrefix(j.ID)
		}
	}
	h.RUnlock()
	if j == nil || ms != "" && !l.fromHost(c.Remote.Addr(), ms) {
		c.Reject(batchreq.PBSE_UNKJOBID, "")
		return
	}
	name := l.spoolPath(prefix, body.FileType)
	if name == "" {
		c.Reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	flags := os.O_WRONLY | os.O_APPEND
	if body.Seq == 0 {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	err := os.MkdirAll(filepath.Dir(name), 0o755)
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(name, flags|syscall.O_NOFOLLOW, 0o600); err == nil {
			_, err = f.Write(body.Data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		l.logError("req_mvjobfile", err.Error())
		c.Send(batchreq.SystemErrorReply("PBS_Server", 5, "cannot save job file"))
		return
	}
	c.Send(batchreq.NullReply())
}

// sendSpool sends the spool files a rerun job's previous MOM returned
// to the job's new MOM, each that exists, in chunks (spec 10 §6.1 step
// c). It returns a failure reply, or nil.
func (l *Link) sendSpool(m *mom.Conn, run *launch) *batchreq.Reply {
	for _, f := range spoolSuffixes {
		data, err := os.ReadFile(l.spoolPath(run.prefix, f.typ))
		if err != nil {
			continue
		}
		for seq := 0; seq == 0 || len(data) > 0; seq++ {
			n := min(len(data), scriptChunk)
			p, err := m.Call(batchreq.PBS_BATCH_MvJobFile, &batchreq.JobFile{Seq: seq, FileType: f.typ, JobID: run.id, Data: data[:n]}, "")
			if err != nil {
				return batchreq.ErrorReply(batchreq.PBSE_MOMREJECT, "", "connection to mom timed out")
			}
			if p.Code != 0 {
				return p
			}
			data = data[n:]
		}
	}
	return nil
}

// removeSpool removes a job's spool files once they reached its MOM.
func (l *Link) removeSpool(prefix string) {
	for _, f := range spoolSuffixes {
		os.Remove(l.spoolPath(prefix, f.typ))
	}
}
