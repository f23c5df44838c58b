package state

import (
	"strconv"

	"gopbs/attr"
)

// JobView returns a job's attributes including the computed ones (state,
// queue, server, hold types, substate, queue rank and type), in reporting
// order, appended to out[:0]. server is the server's name. Only the
// attributes whose index is set in wanted are included (nil: all), so a
// status asking for a few attributes neither copies nor computes the
// others.
func JobView(out Attrs, j *Job, server string, wanted []bool) Attrs {
	want := func(idx int) bool { return wanted == nil || wanted[idx] }
	var synthBuf [8]AttrValue
	synth := synthBuf[:0]
	if want(attr.JobState) {
		synth = append(synth, AttrValue{Index: attr.JobState, Value: j.StateLetter()})
	}
	if j.Queue != nil && want(attr.JobQueue) {
		synth = append(synth, AttrValue{Index: attr.JobQueue, Value: j.Queue.Name})
	}
	if want(attr.JobServer) {
		synth = append(synth, AttrValue{Index: attr.JobServer, Value: server})
	}
	if h := j.Hold & (HoldUser | HoldOther | HoldSystem); (h != 0 || j.Hold == 0) && want(attr.JobHoldTypes) {
		synth = append(synth, AttrValue{Index: attr.JobHoldTypes, Value: FormatHold(h)})
	}
	if want(attr.JobSubstate) {
		synth = append(synth, AttrValue{Index: attr.JobSubstate, Value: strconv.Itoa(int(j.Substate))})
	}
	if j.Queue != nil {
		if want(attr.JobQueueRank) {
			synth = append(synth, AttrValue{Index: attr.JobQueueRank, Value: strconv.FormatInt(j.Rank, 10)})
		}
		if want(attr.JobQueueType) {
			qt := "E"
			if j.Queue.IsRoute() {
				qt = "R"
			}
			synth = append(synth, AttrValue{Index: attr.JobQueueType, Value: qt})
		}
	}
	out = out[:0]
	a, b := j.Attrs, synth
	for len(a) > 0 || len(b) > 0 {
		if len(a) > 0 && !want(a[0].Index) {
			a = a[1:] // a stored value not asked for
			continue
		}
		switch {
		case len(b) == 0 && wanted == nil:
			out = append(out, a...)
			a = nil
		case len(b) == 0:
			out = append(out, a[0])
			a = a[1:]
		case len(a) == 0:
			out = append(out, b...)
			b = nil
		case a[0].Index == b[0].Index:
			out = append(out, b[0]) // computed value wins
			a, b = a[1:], b[1:]
		case a[0].Index < b[0].Index || a[0].Index == b[0].Index && a[0].Resource < b[0].Resource:
			out = append(out, a[0])
			a = a[1:]
		default:
			out = append(out, b[0])
			b = b[1:]
		}
	}
	return out
}
