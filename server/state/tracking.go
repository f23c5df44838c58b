package state

import (
	"fmt"
	"strconv"
	"strings"

	"gopbs/server/store"
)

// The tracking table (spec 13 §10) remembers where jobs that left this
// server went, so that LocateJob can send clients after them (spec 02
// §10: "the tracked location"). A move records the destination server;
// another server can report a later location with TrackJob. An entry of
// a job that is back on this server is not consulted. The table is kept
// in the store under the server record's bucket.

// trackingKey is the table's key in store.Server.
const trackingKey = "tracking"

// TrackEntry is where a job is now.
type TrackEntry struct {
	Hop      int    // hop count at the location
	Location string // server (host or host:port)
	State    byte   // job state letter there
}

// Tracking is the tracking table. The zero value is an empty table.
type Tracking struct {
	byID map[string]TrackEntry
}

// Track records a job's location if it is newer (more hops) than the one
// known and returns the store operations saving the table (none if the
// entry was older).
func (t *Tracking) Track(id string, e TrackEntry) []store.Op {
	if old, ok := t.byID[id]; ok && old.Hop > e.Hop {
		return nil
	}
	if t.byID == nil {
		t.byID = make(map[string]TrackEntry)
	}
	t.byID[id] = e
	return []store.Op{t.save()}
}

// save encodes the table, one job a line: id, hop count, location and
// state separated by tabs.
func (t *Tracking) save() store.Op {
	var b strings.Builder
	for id, e := range t.byID {
		fmt.Fprintf(&b, "%s\t%d\t%s\t%c\n", id, e.Hop, e.Location, e.State)
	}
	return store.Put(store.Server, trackingKey, []byte(b.String()))
}

// Load reads the table from the store.
func (t *Tracking) Load(st store.Store) error {
	b, err := st.Get(store.Server, trackingKey)
	if err != nil || len(b) == 0 {
		return err
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || len(f[3]) != 1 {
			return fmt.Errorf("tracking table: bad line %q: %w", line, ErrCorrupt)
		}
		hop, err := strconv.Atoi(f[1])
		if err != nil {
			return fmt.Errorf("tracking table: bad hop count %q: %w", line, ErrCorrupt)
		}
		if t.byID == nil {
			t.byID = make(map[string]TrackEntry)
		}
		t.byID[f[0]] = TrackEntry{Hop: hop, Location: f[2], State: f[3][0]}
	}
	return nil
}

// Find looks a job up by id as clients give it (as the job table's
// lookup does): the full id, with "@server" appended, or the bare
// sequence number, completed with serverName.
func (t *Tracking) Find(id, serverName string) (TrackEntry, bool) {
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id = id[:i]
	}
	if e, ok := t.byID[id]; ok {
		return e, true
	}
	seq, _, _ := strings.Cut(id, ".")
	e, ok := t.byID[seq+"."+serverName]
	return e, ok
}
