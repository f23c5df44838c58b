package server

import (
	"strconv"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
)

// withRemaining inserts the pseudo-attribute Walltime.Remaining right
// after start_time in a running job's full status (spec 04 §3.1): the
// requested walltime minus the time since the start, in seconds, as an
// unsigned number (it wraps when the walltime is exceeded). Other views
// are returned unchanged. Called with s.mu held.
func (s *Server) withRemaining(view state.Attrs, j *state.Job) state.Attrs {
	if j.State != pbsattr.StateRunning || j.Substate == pbsattr.SubSuspend {
		return view
	}
	wall, ok := state.ParseTime(j.Attrs.GetRes(pbsattr.JobResourceList, "walltime"))
	start, err := strconv.ParseInt(j.Attrs.Get(pbsattr.JobStartTime), 10, 64)
	if !ok || err != nil {
		return view
	}
	rem := wall - (s.now().Unix() - start)
	pseudo := state.AttrValue{Index: state.UnknownJobAttr, Resource: "Walltime\x1fRemaining", Value: strconv.FormatUint(uint64(rem), 10)}
	for i, v := range view {
		if v.Index == pbsattr.JobStartTime {
			view = append(view, state.AttrValue{})
			copy(view[i+2:], view[i+1:])
			view[i+1] = pseudo
			return view
		}
	}
	return view
}
