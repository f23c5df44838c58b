package link

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"gopbs/batchreq"
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
	addr := netip.AddrPortFrom(server, uint16(serverPortOf(j.attrs, m.opt.ServerPort)))
	var sent []string
	err := m.withServer(bc.ctx, addr, func(sc *serverConn) error {
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
				rep, err := sc.call(req)
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
	})
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

// copyRequest converts a CopyFiles/DelFiles body for the executor.
func copyRequest(b *batchreq.CopyFiles) *jobexec.CopyRequest {
	r := &jobexec.CopyRequest{JobID: b.JobID, Owner: b.Owner, User: b.ExecUser, Group: b.ExecGroup, Direction: b.Direction}
	for _, p := range b.Pairs {
		r.Pairs = append(r.Pairs, jobexec.CopyPair{Flag: p.Flag, Local: p.Local, Remote: p.Remote})
	}
	return r
}

// stageReply turns an executor's staging error into the reply.
func stageReply(err error) *batchreq.Reply {
	var ce *jobexec.CopyError
	switch {
	case err == nil:
		return batchreq.NullReply()
	case errors.As(err, &ce):
		return batchreq.TextReply(batchreq.PBSE_NOCOPYFILE, ce.Text)
	}
	return batchreq.TextReply(batchreq.PBSE_NOCOPYFILE, err.Error())
}

func (m *Mom) reqCopyFiles(bc *batchConn, req *batchreq.Request) {
	bc.reply(stageReply(m.exec.CopyFiles(bc.ctx, copyRequest(req.Body.(*batchreq.CopyFiles)))))
}

func (m *Mom) reqDelFiles(bc *batchConn, req *batchreq.Request) {
	bc.reply(stageReply(m.exec.DeleteFiles(bc.ctx, copyRequest(req.Body.(*batchreq.CopyFiles)))))
}
