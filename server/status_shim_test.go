package server

import (
	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/handler/status"
	submission "gopbs/server/handler/submit"
	"gopbs/server/state"
)

// The status family moved to package status; these give the package's
// older tests the names they use.

func statusList(defs *state.DefTable, view state.Attrs, who *handler.Asker, isOwner bool, want batchreq.AttrList) (batchreq.AttrList, *batchreq.Attr) {
	return status.List(defs, view, who, isOwner, want)
}

func clientView(view state.Attrs) state.Attrs { return status.ClientView(view) }

func (s *Server) jobView(j *state.Job) state.Attrs { return state.JobView(nil, j, s.name, nil) }

func (s *Server) jobStatus(who *handler.Asker, j *state.Job, want batchreq.AttrList) (batchreq.StatusObject, *batchreq.Attr) {
	return status.JobStatus(statusState{s}, who, j, want)
}

func (s *Server) encodeJobStatuses(who *handler.Asker, jobs []*state.Job, delta int64) []byte {
	return status.EncodeJobStatuses(statusState{s}, who, jobs, delta)
}

func validHostPattern(h string) bool { return state.ValidHostPattern(h) }

func envValue(vl, name string) string { return submission.EnvValue(vl, name) }
