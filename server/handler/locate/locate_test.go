package locate

import (
	"testing"

	"gopbs/batchreq"
	"gopbs/server/handler"
	"gopbs/server/state"
	"gopbs/server/store"
)

// fakeState is a server holding the jobs in jobs, with a tracking table.
type fakeState struct {
	jobs     map[string]bool
	tracking state.Tracking
	locked   int // Lock/RLock depth, checked by the calls made under it
	commits  [][]store.Op
	t        *testing.T
}

func (f *fakeState) RLock()   { f.locked++ }
func (f *fakeState) RUnlock() { f.locked-- }
func (f *fakeState) Lock()    { f.locked++ }
func (f *fakeState) Unlock()  { f.locked-- }
func (f *fakeState) HasJob(id string) bool {
	f.underLock()
	return f.jobs[id]
}
func (f *fakeState) Tracking() *state.Tracking {
	f.underLock()
	return &f.tracking
}
func (f *fakeState) ServerName() string { return "srv" }
func (f *fakeState) Commit(w handler.ReplyWriter, ops []store.Op, p *batchreq.Reply) {
	f.underLock()
	f.commits = append(f.commits, ops)
	f.Unlock()
	w.Send(p)
}
func (f *fakeState) underLock() {
	if f.locked != 1 {
		f.t.Helper()
		f.t.Fatalf("state used with lock depth %d", f.locked)
	}
}

// replies records what a handler answers.
type replies struct{ got []*batchreq.Reply }

func (r *replies) Send(p *batchreq.Reply) { r.got = append(r.got, p) }
func (r *replies) Reject(code int, msg string) {
	r.got = append(r.got, batchreq.ErrorReply(code, msg, ""))
}

func (r *replies) one(t *testing.T) *batchreq.Reply {
	t.Helper()
	if len(r.got) != 1 {
		t.Fatalf("%d replies, want 1", len(r.got))
	}
	return r.got[0]
}

func TestLocateJob(t *testing.T) {
	st := &fakeState{jobs: map[string]bool{"1.srv": true}, t: t}
	st.tracking.Track("2.srv", state.TrackEntry{Hop: 1, Location: "other:15001", State: 'Q'})
	for _, c := range []struct {
		id, location string
		code         int
	}{
		{"1.srv", "srv", 0},
		{"2.srv", "other:15001", 0},
		{"2", "other:15001", 0}, // bare sequence number
		{"2.srv@srv", "other:15001", 0},
		{"3.srv", "", batchreq.PBSE_UNKJOBID},
	} {
		var w replies
		LocateJob(st, &w, &batchreq.JobID{ID: c.id})
		p := w.one(t)
		if p.Code != c.code || p.Location != c.location {
			t.Errorf("LocateJob %s: code %d location %q, want %d %q", c.id, p.Code, p.Location, c.code, c.location)
		}
		if st.locked != 0 {
			t.Fatalf("LocateJob %s: lock depth %d after the reply", c.id, st.locked)
		}
	}
}

func TestTrackJob(t *testing.T) {
	st := &fakeState{jobs: map[string]bool{"1.srv": true}, t: t}
	server := handler.Asker{User: "root", Host: "other", Privileged: true}
	track := func(who handler.Asker, id string, hop int, loc string) *batchreq.Reply {
		t.Helper()
		var w replies
		TrackJob(st, &w, who, &batchreq.TrackJob{JobID: id, HopCount: hop, Location: loc, State: 'R'})
		if st.locked != 0 {
			t.Fatalf("TrackJob %s: lock depth %d after the reply", id, st.locked)
		}
		return w.one(t)
	}
	if p := track(handler.Asker{User: "alice", Host: "h", Manager: true}, "2.srv", 1, "x"); p.Code != batchreq.PBSE_IVALREQ {
		t.Errorf("TrackJob from a user: code %d, want PBSE_IVALREQ", p.Code)
	}
	if p := track(server, "1.srv", 1, "x"); p.Code != 0 || len(st.commits) != 0 {
		t.Errorf("TrackJob of a job that is here: code %d, %d commits; want 0 and none", p.Code, len(st.commits))
	}
	if p := track(server, "2.srv", 2, "b:15001"); p.Code != 0 || len(st.commits) != 1 {
		t.Fatalf("TrackJob: code %d, %d commits; want 0 and 1", p.Code, len(st.commits))
	}
	if p := track(server, "2.srv", 1, "a:15001"); p.Code != 0 || len(st.commits) != 1 {
		t.Errorf("older TrackJob: code %d, %d commits; want 0 and still 1", p.Code, len(st.commits))
	}
	if e, ok := st.tracking.Find("2.srv", "srv"); !ok || e.Location != "b:15001" || e.Hop != 2 || e.State != 'R' {
		t.Errorf("tracked %+v %v, want the newer location", e, ok)
	}
}
