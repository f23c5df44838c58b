package server

import (
	"strconv"

	pbsattr "gopbs/attr"
)

// withRemaining inserts the pseudo-attribute Walltime.Remaining right
// after start_time in a running job's full status (spec 04 §3.1): the
// requested walltime minus the time since the start, in seconds, as an
// unsigned number (it wraps when the walltime is exceeded). Other views
// are returned unchanged. Called with s.mu held.
func (s *Server) withRemaining(view attrList, j *Job) attrList {
	if j.state != pbsattr.StateRunning || j.substate == pbsattr.SubSuspend {
		return view
	}
	wall, ok := parseTime(j.attrs.getRes(pbsattr.JobResourceList, "walltime"))
	start, err := strconv.ParseInt(j.attrs.get(pbsattr.JobStartTime), 10, 64)
	if !ok || err != nil {
		return view
	}
	rem := wall - (s.now().Unix() - start)
	pseudo := attrVal{idx: unknownJobAttr, res: "Walltime\x1fRemaining", val: strconv.FormatUint(uint64(rem), 10)}
	for i, v := range view {
		if v.idx == pbsattr.JobStartTime {
			view = append(view, attrVal{})
			copy(view[i+2:], view[i+1:])
			view[i+1] = pseudo
			return view
		}
	}
	return view
}
