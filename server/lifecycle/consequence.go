package lifecycle

import (
	"strings"
	"time"

	"gopbs/server/state"
)

// consequences remembers, for a while, the jobs the server removed as a
// consequence of another job's end (an afterok dependent of a deleted
// job). A client that names several jobs in one command (qdel A B, B
// depending on A) named jobs that existed when it started: a DeleteJob
// for B that arrives after A's deletion removed it is served as done, not
// answered "Unknown Job Id". Bounded in size and age; guarded by the
// server's lock.
type consequences struct {
	at    map[string]consequence // job id → its removal
	order []string               // ids in the order they were noted
}

// consequence is one remembered removal.
type consequence struct {
	when  time.Time
	owner string // the job owner's user name
}

const (
	consequenceAge = 10 * time.Minute // how long a removal is remembered
	consequenceMax = 16384            // how many removals are remembered
)

// note records that job id, owned by user owner, was removed at now.
func (c *consequences) note(id, owner string, now time.Time) {
	if c.at == nil {
		c.at = make(map[string]consequence)
	}
	if _, ok := c.at[id]; !ok {
		c.order = append(c.order, id)
	}
	c.at[id] = consequence{when: now, owner: owner}
	c.prune(now)
}

// removed returns the owner of job id if it was removed as a consequence
// within consequenceAge of now.
func (c *consequences) removed(id string, now time.Time) (owner string, ok bool) {
	e, ok := c.at[id]
	if !ok || now.Sub(e.when) > consequenceAge {
		return "", false
	}
	return e.owner, true
}

// prune drops the oldest entries beyond consequenceMax or consequenceAge.
func (c *consequences) prune(now time.Time) {
	n := 0
	for n < len(c.order) && (len(c.order)-n > consequenceMax || now.Sub(c.at[c.order[n]].when) > consequenceAge) {
		delete(c.at, c.order[n])
		n++
	}
	if n > 0 {
		c.order = append(c.order[:0:0], c.order[n:]...)
	}
}

// NoteConsequence remembers that job j was removed as a consequence of
// another job's end.
func (l *Life) NoteConsequence(j *state.Job) {
	l.consequent.note(j.ID, j.OwnerUser(), l.now())
}

// RemovedAsConsequence reports whether the job a client names as id (a
// full id, or its sequence number alone, optionally @server) was removed
// lately as a consequence of another job's end, and whether the
// requester (user; privileged: an operator or a manager) may act on it:
// its owner or a privileged requester may.
func (l *Life) RemovedAsConsequence(id, user string, privileged bool) bool {
	if i := strings.IndexByte(id, '@'); i >= 0 {
		id = id[:i]
	}
	now := l.now()
	owner, ok := l.consequent.removed(id, now)
	if !ok {
		seq, _, _ := strings.Cut(id, ".")
		owner, ok = l.consequent.removed(seq+"."+l.name, now)
	}
	return ok && (owner == user || privileged)
}
