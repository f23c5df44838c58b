package server

import (
	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/handler/status"
	submission "gopbs/server/handler/submit"
	"gopbs/server/state"
)

// The status family moved to package status; these give the package's
// older tests the names they use.

func (p perm) asker() *handler.Asker {
	return &handler.Asker{Operator: p.oper, Manager: p.mgr, Privileged: p.svr}
}

func (p perm) readable(ap pbsattr.Perm, af pbsattr.Flag, isOwner bool) bool {
	return p.asker().Readable(ap, af, isOwner)
}

func statusList(defs *state.DefTable, view state.Attrs, p perm, isOwner bool, want batchreq.AttrList) (batchreq.AttrList, *batchreq.Attr) {
	return status.List(defs, view, p.asker(), isOwner, want)
}

func clientView(view state.Attrs) state.Attrs { return status.ClientView(view) }

func (s *Server) jobView(j *state.Job) state.Attrs { return state.JobView(nil, j, s.name, nil) }

func (s *Server) jobStatus(c *conn, j *state.Job, want batchreq.AttrList) (batchreq.StatusObject, *batchreq.Attr) {
	who := c.asker()
	return status.JobStatus(statusState{s}, &who, j, want)
}

func (s *Server) encodeJobStatuses(c *conn, jobs []*state.Job, delta int64) []byte {
	who := c.asker()
	return status.EncodeJobStatuses(statusState{s}, &who, jobs, delta)
}

func validHostPattern(h string) bool { return state.ValidHostPattern(h) }

func envValue(vl, name string) string { return submission.EnvValue(vl, name) }
