// Package store keeps pbs_server's durable state: the server attributes,
// queues, nodes, jobs and job scripts. The server describes changes as
// batches of operations; Apply returns only when the batch is on disk.
//
// The bbolt implementation commits concurrent batches together (group
// commit): one committer goroutine drains every batch waiting at the time
// it starts a transaction, so N clients waiting at once share one fsync and
// nobody waits for an artificial delay.
package store

import (
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Buckets (object kinds) of the store.
const (
	Server = "server" // key "attributes" and small server records
	Queues = "queues" // queue name → encoded queue
	Nodes  = "nodes"  // node name → encoded node
	Jobs   = "jobs"   // job id → encoded job
	Script = "script" // job id → job script
	Arrays = "arrays" // array id → encoded array bookkeeping
)

var buckets = []string{Server, Queues, Nodes, Jobs, Script, Arrays}

// Op is one change: a put of Value under Bucket/Key, or a delete.
type Op struct {
	Bucket string
	Key    string
	Value  []byte
	Delete bool
}

// Put returns an Op storing value.
func Put(bucket, key string, value []byte) Op { return Op{Bucket: bucket, Key: key, Value: value} }

// Del returns an Op deleting a key.
func Del(bucket, key string) Op { return Op{Bucket: bucket, Key: key, Delete: true} }

// Store is the persistence interface of the server.
type Store interface {
	// Apply makes a batch of operations durable atomically.
	Apply(ops ...Op) error
	// Submit queues a batch and returns a function that waits until it is
	// durable. Batches are committed in the order they were submitted, so
	// a caller may submit while holding its own lock (fixing the order of
	// its changes) and wait after releasing it.
	Submit(ops ...Op) (wait func() error)
	// ForEach calls fn for every key of a bucket, in key order. The value
	// is only valid during the call.
	ForEach(bucket string, fn func(key string, value []byte) error) error
	// Get returns a copy of one value (nil if absent).
	Get(bucket, key string) ([]byte, error)
	// Close flushes outstanding batches and closes the store.
	Close() error
}

// ErrClosed is returned by Apply after Close.
var ErrClosed = errors.New("store: closed")

// Bolt is a Store in one bbolt file.
type Bolt struct {
	db *bolt.DB

	mu      sync.Mutex
	pending []*batch
	wake    chan struct{}
	closed  bool
	done    chan struct{}
	// Commits counts transactions (for tests and statistics).
	commits int64
}

type batch struct {
	ops []Op
	err chan error
}

// OpenBolt opens (creating if needed) the database file at path.
func OpenBolt(path string) (*Bolt, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range buckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: create buckets: %w", err)
	}
	s := &Bolt{db: db, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.committer()
	return s, nil
}

// Apply implements Store.
func (s *Bolt) Apply(ops ...Op) error { return s.Submit(ops...)() }

// Submit implements Store.
func (s *Bolt) Submit(ops ...Op) func() error {
	if len(ops) == 0 {
		return func() error { return nil }
	}
	b := &batch{ops: ops, err: make(chan error, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return func() error { return ErrClosed }
	}
	s.pending = append(s.pending, b)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return func() error { return <-b.err }
}

func (s *Bolt) committer() {
	defer close(s.done)
	for {
		s.mu.Lock()
		group := s.pending
		s.pending = nil
		closed := s.closed
		s.mu.Unlock()
		if len(group) == 0 {
			if closed {
				return
			}
			<-s.wake
			continue
		}
		err := s.db.Update(func(tx *bolt.Tx) error {
			for _, b := range group {
				for _, op := range b.ops {
					bk := tx.Bucket([]byte(op.Bucket))
					if bk == nil {
						return fmt.Errorf("store: unknown bucket %q", op.Bucket)
					}
					var err error
					if op.Delete {
						err = bk.Delete([]byte(op.Key))
					} else {
						err = bk.Put([]byte(op.Key), op.Value)
					}
					if err != nil {
						return fmt.Errorf("store: %s/%s: %w", op.Bucket, op.Key, err)
					}
				}
			}
			return nil
		})
		s.mu.Lock()
		s.commits++
		s.mu.Unlock()
		for _, b := range group {
			b.err <- err
		}
	}
}

// Commits returns the number of transactions committed so far.
func (s *Bolt) Commits() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits
}

// ForEach implements Store.
func (s *Bolt) ForEach(bucket string, fn func(key string, value []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(bucket))
		if bk == nil {
			return fmt.Errorf("store: unknown bucket %q", bucket)
		}
		return bk.ForEach(func(k, v []byte) error { return fn(string(k), v) })
	})
}

// Get implements Store.
func (s *Bolt) Get(bucket, key string) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(bucket))
		if bk == nil {
			return fmt.Errorf("store: unknown bucket %q", bucket)
		}
		if v := bk.Get([]byte(key)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	return out, err
}

// Close implements Store.
func (s *Bolt) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
	return s.db.Close()
}
