// Package reservation serves GoPBS's advance reservations in pbs_server
// (issue 17, seed 002): the requests of the plus_* commands (types
// 1000–1007), the durable table of reservation objects with its R<n>
// counter, the reservations' queues and what happens at their start and
// end (Service.Tick).
//
// The package reaches the rest of the server through the narrow Host
// interface: the server's lock and clock, its nodes, its store, its
// accounting file, and a few actions on queues and jobs (create a
// reservation's queue, comment, requeue and delete jobs). The reservation
// model itself (states, transitions, validation, accounting records) is
// package resv; the choice of nodes (normal conditions and reservable.ad)
// is package sched/reservable.
package reservation

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"gopbs/resv"
	"gopbs/server/store"
)

// counterKey is the key of the next reservation number in store.Resvs;
// no reservation id starts with '#'.
const counterKey = "#next"

// record is a reservation as the store keeps it: the model and what the
// server adds to it.
type record struct {
	Version int `json:"v"`
	resv.Reservation
	// QueueMade is set once the reservation's queue exists; QueueGone once
	// it was removed again (at the end, a cancellation or a destroy).
	QueueMade bool `json:"queue_made,omitempty"`
	QueueGone bool `json:"queue_gone,omitempty"`
	// Ended is set once the end's work (deleting the reservation's jobs,
	// the F record) was done.
	Ended bool `json:"ended,omitempty"`
	// Seen are the jobs counted in the usage, so that a job is counted
	// once.
	Seen []string `json:"seen,omitempty"`
	// Finished is when the reservation became Done or Cancelled, for
	// plus_status -ne.
	Finished int64 `json:"finished,omitempty"`
}

// entry is one reservation in the table.
type entry struct {
	record
	num int
	// lastUsage is the time up to which the usage of running jobs was
	// counted (not stored: after a restart counting goes on from then).
	lastUsage int64
}

// Table holds the reservations by id. It is guarded by the server's lock.
type Table struct {
	byID map[string]*entry
	next int
}

func encode(e *entry) []byte {
	e.Version = 1
	b, err := json.Marshal(&e.record)
	if err != nil {
		panic(fmt.Sprintf("reservation: encode %s: %v", e.ID, err)) // plain data: cannot fail
	}
	return b
}

func decode(id string, b []byte) (*entry, error) {
	e := &entry{}
	if err := json.Unmarshal(b, &e.record); err != nil {
		return nil, fmt.Errorf("reservation %s: %w", id, err)
	}
	if e.ID != id {
		return nil, fmt.Errorf("reservation %s: record names %q", id, e.ID)
	}
	n, err := resv.ParseID(id)
	if err != nil || resv.FormatID(n) != id {
		return nil, fmt.Errorf("reservation record: bad id %q", id)
	}
	e.num = n
	return e, nil
}

// Load reads the table from the store.
func (t *Table) Load(st store.Store) error {
	t.byID = map[string]*entry{}
	t.next = 1
	err := st.ForEach(store.Resvs, func(key string, b []byte) error {
		if key == counterKey {
			n, err := strconv.Atoi(string(b))
			if err != nil || n < 1 {
				return fmt.Errorf("reservation counter %q", b)
			}
			t.next = max(t.next, n)
			return nil
		}
		e, err := decode(key, b)
		if err != nil {
			return err
		}
		t.byID[key] = e
		t.next = max(t.next, e.num+1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("load reservations: %w", err)
	}
	return nil
}

func (t *Table) init() {
	if t.byID == nil {
		t.byID = map[string]*entry{}
		t.next = max(t.next, 1)
	}
}

// newID takes the next reservation number and returns its id with the
// operation saving the counter.
func (t *Table) newID() (string, int, store.Op) {
	t.init()
	n := t.next
	t.next++
	return resv.FormatID(n), n, store.Put(store.Resvs, counterKey, []byte(strconv.Itoa(t.next)))
}

func (t *Table) get(id string) *entry {
	if n, err := resv.ParseID(id); err == nil {
		id = resv.FormatID(n)
	}
	return t.byID[id]
}

func (t *Table) put(e *entry) store.Op {
	t.init()
	t.byID[e.ID] = e
	return store.Put(store.Resvs, e.ID, encode(e))
}

func (t *Table) drop(e *entry) store.Op {
	delete(t.byID, e.ID)
	return store.Del(store.Resvs, e.ID)
}

// list returns the reservations in id order.
func (t *Table) list() []*entry {
	out := make([]*entry, 0, len(t.byID))
	for _, e := range t.byID {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].num < out[j].num })
	return out
}

// models returns the reservations as the model sees them, for resv.Held.
func (t *Table) models() []*resv.Reservation {
	l := t.list()
	out := make([]*resv.Reservation, len(l))
	for i, e := range l {
		out[i] = &e.Reservation
	}
	return out
}
