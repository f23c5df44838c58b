package server

import (
	"fmt"
	"strconv"
	"strings"

	"gopbs/batchreq"
	"gopbs/server/state"
	"gopbs/server/store"
)

// The tracking table (spec 13 §10) remembers where jobs that left this
// server went, so that LocateJob can send clients after them (spec 02
// §10: "the tracked location"). A move records the destination server;
// another server can report a later location with TrackJob. An entry of
// a job that is back on this server is not consulted. The table is kept in the store under the
// server record's bucket.

// trackingKey is the table's key in store.Server.
const trackingKey = "tracking"

// trackEntry is where a job is now.
type trackEntry struct {
	hop      int    // hop count at the location
	location string // server (host or host:port)
	state    byte   // job state letter there
}

// track records a job's location if it is newer (more hops) than the one
// known and returns the store operation saving the table. Called with
// s.mu held.
func (s *Server) track(id string, e trackEntry) []store.Op {
	if old, ok := s.tracking[id]; ok && old.hop > e.hop {
		return nil
	}
	if s.tracking == nil {
		s.tracking = make(map[string]trackEntry)
	}
	s.tracking[id] = e
	return []store.Op{s.saveTrackingOp()}
}

// saveTrackingOp encodes the table, one job a line: id, hop count,
// location and state separated by tabs.
func (s *Server) saveTrackingOp() store.Op {
	var b strings.Builder
	for id, e := range s.tracking {
		fmt.Fprintf(&b, "%s\t%d\t%s\t%c\n", id, e.hop, e.location, e.state)
	}
	return store.Put(store.Server, trackingKey, []byte(b.String()))
}

// loadTracking reads the table saved by saveTrackingOp.
func (s *Server) loadTracking() error {
	b, err := s.store.Get(store.Server, trackingKey)
	if err != nil || len(b) == 0 {
		return err
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || len(f[3]) != 1 {
			return fmt.Errorf("tracking table: bad line %q: %w", line, state.ErrCorrupt)
		}
		hop, err := strconv.Atoi(f[1])
		if err != nil {
			return fmt.Errorf("tracking table: bad hop count %q: %w", line, state.ErrCorrupt)
		}
		if s.tracking == nil {
			s.tracking = make(map[string]trackEntry)
		}
		s.tracking[f[0]] = trackEntry{hop: hop, location: f[2], state: f[3][0]}
	}
	return nil
}

// findTracked looks a job up in the tracking table by id as clients give
// it (as findJob does): the full id, with "@server" appended, or the bare
// sequence number.
func (s *Server) findTracked(id string) (trackEntry, bool) {
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id = id[:i]
	}
	if e, ok := s.tracking[id]; ok {
		return e, true
	}
	seq, _, _ := strings.Cut(id, ".")
	e, ok := s.tracking[seq+"."+s.name]
	return e, ok
}

// handleTrackJob records the location another server reports for a job
// (spec 02 §3.13); only servers may send it.
func (s *Server) handleTrackJob(c *conn, req *batchreq.Request) {
	if !c.perm.svr {
		c.reject(batchreq.PBSE_IVALREQ, "")
		return
	}
	b := req.Body.(*batchreq.TrackJob)
	s.mu.Lock()
	if s.findJob(b.JobID) != nil {
		s.mu.Unlock()
		c.ok() // the job is here: this server knows better
		return
	}
	ops := s.track(b.JobID, trackEntry{hop: b.HopCount, location: b.Location, state: b.State})
	if len(ops) == 0 {
		s.mu.Unlock()
		c.ok()
		return
	}
	s.commitAndReply(c, ops, batchreq.NullReply())
}

// handleLocateJob answers where a job is: this server, the location the
// tracking table knows, or PBSE_UNKJOBID.
func (s *Server) handleLocateJob(c *conn, req *batchreq.Request) {
	id := req.Body.(*batchreq.JobID).ID
	s.mu.RLock()
	here := s.findJob(id) != nil
	e, tracked := s.findTracked(id)
	s.mu.RUnlock()
	switch {
	case here:
		c.send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Locate, Location: s.name})
	case tracked:
		c.send(&batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Locate, Location: e.location})
	default:
		c.reject(batchreq.PBSE_UNKJOBID, "")
	}
}
