// Package pgstore keeps pbs_server's durable state in PostgreSQL, behind
// the same interface as the embedded store (store.Store): the server
// attributes, queues, nodes, jobs and scripts as (bucket, key, value)
// rows of one table.
//
// The durability promise is the embedded store's: a batch is
// acknowledged (Apply returns, the function Submit returned returns, the
// SubmitAsync callback runs) only once the transaction holding it is
// committed. Batches are committed in rounds (group commit): one
// goroutine runs the rounds, each a single transaction holding every
// batch submitted since the previous round began, its statements sent in
// one pipeline; concurrent clients share a commit and nobody waits for
// an artificial delay. Batches are committed in the order they were
// submitted. A round made only of SubmitLogged batches commits with
// synchronous_commit off: it survives a crash of pbs_server (the
// database has it) but not one of the database host before its WAL
// writer flushes it (at most wal_writer_delay, 200 ms by default), the
// same trade the embedded store makes for them. If a round's transaction
// fails, every batch of it fails and nothing of it is applied.
//
// The schema is created and upgraded by Open, by versioned migrations
// (migrations.go) applied under an advisory lock, so that servers
// starting together migrate once; a database of a newer schema than this
// package knows is refused.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"gopbs/server/store"
)

// roundTimeout bounds one round's transaction: a database that stops
// answering fails the batches waiting for it instead of holding their
// clients for ever.
const roundTimeout = 30 * time.Second

// Store is a store.Store in a PostgreSQL database.
type Store struct {
	pool  *pgxpool.Pool
	fence int64 // Options.Fence

	mu      sync.Mutex
	pending []*batch
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	commits int64 // committed rounds
}

type batch struct {
	ops    []store.Op
	logged bool
	notify func(error) // SubmitAsync's callback, or nil
	done   chan struct{}
	err    error
}

var _ store.Store = (*Store)(nil)

// Options adjust OpenWith.
type Options struct {
	// Fence, if not zero, is the token Claim returned: every round
	// checks, in its own transaction, that it is still the database's
	// and fails with ErrFenced otherwise (fence.go).
	Fence int64
}

// Open connects to the database at url (a PostgreSQL connection URL or
// key=value string, as libpq takes), creates or upgrades the schema and
// starts the goroutine that commits batches.
func Open(ctx context.Context, url string) (*Store, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, url string, opt Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	if err := migrate(ctx, pool, migrations); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, fence: opt.Fence, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.committer()
	return s, nil
}

// Apply implements store.Store.
func (s *Store) Apply(ops ...store.Op) error { return s.Submit(ops...)() }

// Submit implements store.Store.
func (s *Store) Submit(ops ...store.Op) func() error { return s.submit(ops, false) }

// SubmitLogged implements store.Store: the batch may be committed without
// waiting for the database's WAL flush (see the package documentation).
func (s *Store) SubmitLogged(ops ...store.Op) func() error { return s.submit(ops, true) }

// SubmitAsync queues a batch like Submit but waits for nothing: done is
// called with the outcome once the batch is committed (or has failed), on
// the store's goroutine; it is called at once if the batch is refused.
func (s *Store) SubmitAsync(done func(error), ops ...store.Op) {
	if len(ops) == 0 {
		done(nil)
		return
	}
	if err := check(ops); err != nil {
		done(err)
		return
	}
	if err := s.enqueue(&batch{ops: ops, notify: done}); err != nil {
		done(err)
	}
}

func (s *Store) submit(ops []store.Op, logged bool) func() error {
	if len(ops) == 0 {
		return func() error { return nil }
	}
	if err := check(ops); err != nil {
		return func() error { return err }
	}
	b := &batch{ops: ops, logged: logged, done: make(chan struct{})}
	if err := s.enqueue(b); err != nil {
		return func() error { return err }
	}
	return func() error {
		<-b.done
		return b.err
	}
}

func check(ops []store.Op) error {
	for _, op := range ops {
		if !store.KnownBucket(op.Bucket) {
			return fmt.Errorf("pgstore: unknown bucket %q", op.Bucket)
		}
	}
	return nil
}

func (s *Store) enqueue(b *batch) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	s.pending = append(s.pending, b)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// committer runs rounds until Close, then commits what is left.
func (s *Store) committer() {
	defer close(s.done)
	for {
		s.mu.Lock()
		round := s.pending
		s.pending = nil
		closed := s.closed
		s.mu.Unlock()
		if len(round) > 0 {
			s.commit(round)
			continue
		}
		if closed {
			return
		}
		<-s.wake
	}
}

// commit runs one round: every batch of it in one transaction.
func (s *Store) commit(round []*batch) {
	ctx, cancel := context.WithTimeout(context.Background(), roundTimeout)
	err := s.transact(ctx, round)
	cancel()
	if err == nil {
		s.mu.Lock()
		s.commits++
		s.mu.Unlock()
	} else {
		err = fmt.Errorf("pgstore: commit: %w", err)
	}
	for _, b := range round {
		b.err = err
		if b.notify != nil {
			b.notify(err)
		} else {
			close(b.done)
		}
	}
}

// Statements of the objects table (migrations.go).
const (
	putSQL = `INSERT INTO gopbs_objects (bucket, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, key) DO UPDATE SET value = EXCLUDED.value`
	delSQL     = `DELETE FROM gopbs_objects WHERE bucket = $1 AND key = $2`
	getSQL     = `SELECT value FROM gopbs_objects WHERE bucket = $1 AND key = $2`
	forEachSQL = `SELECT key, value FROM gopbs_objects WHERE bucket = $1 ORDER BY key`
)

func (s *Store) transact(ctx context.Context, round []*batch) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	logged := true
	var q pgx.Batch
	if s.fence != 0 {
		q.Queue(fenceSQL)
	}
	for _, b := range round {
		logged = logged && b.logged
		for _, op := range b.ops {
			if op.Delete {
				q.Queue(delSQL, op.Bucket, []byte(op.Key))
			} else {
				v := op.Value
				if v == nil {
					v = []byte{}
				}
				q.Queue(putSQL, op.Bucket, []byte(op.Key), v)
			}
		}
	}
	if logged {
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit TO off"); err != nil {
			return err
		}
	}
	br := tx.SendBatch(ctx, &q)
	if s.fence != 0 {
		if err := s.checkFence(br); err != nil {
			br.Close()
			return err
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Get implements store.Store: a copy of one value, nil if absent.
func (s *Store) Get(bucket, key string) ([]byte, error) {
	var v []byte
	err := s.pool.QueryRow(context.Background(), getSQL, bucket, []byte(key)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: get %s/%s: %w", bucket, key, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// ForEach implements store.Store: fn is called for every key of bucket
// in byte order of the keys.
func (s *Store) ForEach(bucket string, fn func(key string, value []byte) error) error {
	rows, err := s.pool.Query(context.Background(), forEachSQL, bucket)
	if err != nil {
		return fmt.Errorf("pgstore: read %s: %w", bucket, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			return fmt.Errorf("pgstore: read %s: %w", bucket, err)
		}
		if err := fn(string(k), v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgstore: read %s: %w", bucket, err)
	}
	return nil
}

// Commits returns the number of rounds committed so far (each one
// transaction, however many batches it held).
func (s *Store) Commits() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits
}

// Close implements store.Store: batches submitted before are committed,
// later ones refused with store.ErrClosed, and the connections closed.
func (s *Store) Close() error {
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
	s.pool.Close()
	return nil
}
