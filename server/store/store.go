// Package store keeps pbs_server's durable state: the server attributes,
// queues, nodes, jobs and job scripts. The server describes changes as
// batches of operations; Apply returns only when the batch is on disk.
//
// The implementation is a bbolt database plus a write-ahead log. Batches
// are made durable in rounds (group commit: N concurrent clients share one
// round and nobody waits for an artificial delay): a round takes every
// batch waiting when it starts, writes them to the log as one record and
// makes the log durable with a single fdatasync. The round is run by the
// first caller that waits for its batch while no round is under way (the
// leader), on its own goroutine: an idle store commits a lone batch with
// no hand-off to another goroutine. Callers arriving meanwhile wait for
// the round after it, which one of them leads. A background goroutine
// commits batches nobody waits for and applies the logged operations to
// bbolt in one synchronous transaction at checkpoints (every second or
// every few thousand operations, and at Close), after which the log starts
// over.
//
// A batch submitted with SubmitLogged is acknowledged once its record is
// written to the log, before the fdatasync: it survives a crash of the
// server (kill -9; the record is in the kernel's page cache) but not a
// power failure until the log is next synced. A round made only of such
// batches is not synced; the background goroutine syncs the log
// lazySyncDelay later, and any earlier synced round or checkpoint covers
// them too. The log is written in order, so a power failure can only lose
// a tail of such batches, never a synced batch after them. The server
// uses it for changes worth one comment line (the scheduler's job
// comments), where waiting for the disk would cost more than the change
// is worth.
// Opening the store replays a log left by a crash; a torn last record is a
// batch that was never acknowledged and is dropped.
//
// The log file is reused rather than truncated: each checkpoint starts a
// new generation, written from offset 0 over the previous one, and bbolt
// records (in the checkpoint's own transaction) which generation the log
// holds. Records carry their generation, so a replay stops at the first
// record of an older one. Writing inside the file's existing size lets
// fdatasync skip the inode (the size does not change), which makes each
// commit markedly cheaper than appending; the file is grown in steps of
// walGrowth bytes of zeros.
package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sync"
	"time"

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
	Resvs  = "resvs"  // reservation id → encoded advance reservation; "#next" → the next number
)

var buckets = []string{Server, Queues, Nodes, Jobs, Script, Arrays, Resvs}

// metaBucket holds the store's own bookkeeping: key walGenKey is the
// generation (8 bytes, big-endian) of the log records not yet in bbolt.
const (
	metaBucket = "_store"
	walGenKey  = "wal-generation"
)

// walGrowth is the step by which the log file grows: a record that would
// end past the file's size is written followed by zeros up to the next
// multiple of walGrowth. walMaxSize is the size above which a checkpoint
// shrinks the file back to zero (a burst of large batches).
const (
	walGrowth  = 1 << 20
	walMaxSize = 64 << 20
)

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
	// SubmitLogged is Submit for a batch that may be acknowledged once it
	// survives a crash of the process, before it survives a power
	// failure; it keeps its place in the order of batches.
	SubmitLogged(ops ...Op) (wait func() error)
	// ForEach calls fn for every key of a bucket, in key order. The value
	// is only valid during the call.
	ForEach(bucket string, fn func(key string, value []byte) error) error
	// Get returns a copy of one value (nil if absent).
	Get(bucket, key string) ([]byte, error)
	// Close flushes outstanding batches and closes the store.
	Close() error
}

// AsyncStore is a Store that can also report a batch's outcome by a
// callback instead of a wait: SubmitAsync queues the batch like Submit
// and calls done with the outcome once it is durable (or has failed), on
// the store's own goroutine, or at once when the batch is refused. Bolt
// and pgstore.Store are AsyncStores.
type AsyncStore interface {
	Store
	SubmitAsync(done func(error), ops ...Op)
}

// ErrClosed is returned by Apply after Close.
var ErrClosed = errors.New("store: closed")

// Checkpoint thresholds.
const (
	checkpointOps      = 20000
	checkpointInterval = time.Second
)

// lazySyncDelay is how long records of logged batches (SubmitLogged) may
// wait for their fdatasync: the most a power failure can lose of them.
const lazySyncDelay = 10 * time.Millisecond

// Bolt is a Store in a bbolt file with a write-ahead log beside it
// (<path>.wal).
type Bolt struct {
	db      *bolt.DB
	wal     *os.File
	walPath string

	// Owned by whoever has set busy (and by OpenBolt before any round).
	walGen   uint64 // generation of the records being written
	walOff   int64  // where the next record goes
	walSize  int64  // size of the log file
	buf      []byte // record being written
	lastCkpt time.Time

	mu        sync.Mutex
	roundDone *sync.Cond // signalled (on mu) when busy is cleared
	busy      bool       // a round or a checkpoint is under way
	pending   []*batch
	spare     []*batch // the previous round's slice, reused
	wake      chan struct{}
	closed    bool
	done      chan struct{}
	commits   int64 // log rounds (fsyncs of the log)
	unapplied []Op  // logged, not yet in bbolt
	flushReq  []chan error
	notify    []func(error) // callbacks of the last round, reused
	// unsynced is set while the log holds records written by rounds of
	// logged batches only, not yet fdatasynced.
	unsynced bool
	syncs    int64 // fdatasyncs of the log (rounds and lazy syncs)
	// observe, if set, is told of each successful round (SetObserver).
	observe func(d time.Duration, batches int)
}

// SetObserver has f called after each successful group commit with the
// time its record took to write (and sync) and the number of batches it
// made durable; nil stops the calls. f runs on the committing goroutine
// and must return quickly.
func (s *Bolt) SetObserver(f func(d time.Duration, batches int)) {
	s.mu.Lock()
	s.observe = f
	s.mu.Unlock()
}

type batch struct {
	ops  []Op
	done bool  // set, with err, when its round is over
	err  error // the round's outcome
	// notify, if set, is called with err after the round (SubmitAsync).
	notify func(error)
	// logged batches need their record written, not synced
	// (SubmitLogged).
	logged bool
}

// OpenBolt opens (creating if needed) the database file at path and
// replays its write-ahead log.
func OpenBolt(path string) (*Bolt, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType, InitialMmapSize: 1 << 28})
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range append([]string{metaBucket}, buckets...) {
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
	s := &Bolt{db: db, walPath: path + ".wal", wake: make(chan struct{}, 1), done: make(chan struct{}), lastCkpt: time.Now()}
	s.roundDone = sync.NewCond(&s.mu)
	if err := s.replay(); err != nil {
		db.Close()
		return nil, err
	}
	s.wal, err = os.OpenFile(s.walPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		var fi os.FileInfo
		if fi, err = s.wal.Stat(); err == nil {
			s.walSize = fi.Size()
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open log: %w", err)
	}
	go s.committer()
	return s, nil
}

// replay applies the records of the current generation of a log left
// behind to bbolt and starts a new generation, in one transaction.
func (s *Bolt) replay() error {
	gen, err := walGeneration(s.db)
	if err != nil {
		return err
	}
	ops, err := readLog(s.walPath, gen)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := applyOps(tx, ops); err != nil {
			return err
		}
		return putGeneration(tx, gen+1)
	})
	if err != nil {
		return fmt.Errorf("store: replay log: %w", err)
	}
	s.walGen = gen + 1
	return nil
}

// walGeneration returns the log generation recorded in bbolt (0 for a
// database that has none yet).
func walGeneration(db *bolt.DB) (uint64, error) {
	var gen uint64
	err := db.View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket([]byte(metaBucket)); bk != nil {
			if v := bk.Get([]byte(walGenKey)); len(v) == 8 {
				gen = binary.BigEndian.Uint64(v)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: read log generation: %w", err)
	}
	return gen, nil
}

func putGeneration(tx *bolt.Tx, gen uint64) error {
	return tx.Bucket([]byte(metaBucket)).Put([]byte(walGenKey), binary.BigEndian.AppendUint64(nil, gen))
}

// readLog returns the operations of the complete records of generation
// gen at the start of the log at path, oldest first; the error wraps
// os.ErrNotExist if there is no log. A torn or corrupt record, or one of
// another generation, ends the log: it is a batch that was never
// acknowledged, or an older generation already in bbolt.
func readLog(path string, gen uint64) ([]Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("store: open log: %w", err)
	}
	defer f.Close()
	var ops []Op
	r := bufio.NewReader(f)
	for {
		g, rec, err := readRecord(r)
		if err != nil || g != gen {
			return ops, nil // end of log, a torn record or an older generation
		}
		more, err := decodeOps(rec)
		if err != nil {
			return ops, nil
		}
		ops = append(ops, more...)
	}
}

// Apply implements Store.
func (s *Bolt) Apply(ops ...Op) error { return s.Submit(ops...)() }

// Submit implements Store.
func (s *Bolt) Submit(ops ...Op) func() error { return s.submit(ops, false) }

// SubmitLogged implements Store: the batch is acknowledged once written
// to the log, without waiting for its fdatasync (see the package
// documentation).
func (s *Bolt) SubmitLogged(ops ...Op) func() error { return s.submit(ops, true) }

func (s *Bolt) submit(ops []Op, logged bool) func() error {
	if len(ops) == 0 {
		return func() error { return nil }
	}
	for _, op := range ops {
		if !KnownBucket(op.Bucket) {
			err := fmt.Errorf("store: unknown bucket %q", op.Bucket)
			return func() error { return err }
		}
	}
	b := &batch{ops: ops, logged: logged}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return func() error { return ErrClosed }
	}
	s.pending = append(s.pending, b)
	s.mu.Unlock()
	return func() error { return s.wait(b) }
}

// SubmitAsync queues a batch like Submit but waits for nothing: done is
// called with the outcome once the batch is durable (or has failed), on
// the goroutine that ran its round, after the batch is visible to Get.
// done must not block; it is called at once (on the caller's goroutine)
// if the batch is refused. Batches submitted with Submit and SubmitAsync
// are committed in the order they were submitted. A round is started on
// the store's own goroutine, so that the caller (an event loop) never
// waits for the disk.
func (s *Bolt) SubmitAsync(done func(error), ops ...Op) {
	if len(ops) == 0 {
		done(nil)
		return
	}
	for _, op := range ops {
		if !KnownBucket(op.Bucket) {
			done(fmt.Errorf("store: unknown bucket %q", op.Bucket))
			return
		}
	}
	b := &batch{ops: ops, notify: done}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		done(ErrClosed)
		return
	}
	s.pending = append(s.pending, b)
	s.mu.Unlock()
	s.poke()
}

// wait returns once b's round is over, leading a round itself whenever
// none is under way.
func (s *Bolt) wait(b *batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !b.done {
		if !s.busy && len(s.pending) > 0 {
			s.round()
			continue
		}
		s.roundDone.Wait()
	}
	return b.err
}

// round commits every pending batch: one log record, one fdatasync
// (none if every batch of the group is a logged one). Called with s.mu
// held and no round under way; s.mu is released during the write.
func (s *Bolt) round() {
	s.busy = true
	group := s.pending
	s.pending = s.spare[:0]
	observe := s.observe
	s.mu.Unlock()
	// One record for the whole group, encoded in place.
	n := 0
	sync := false
	for _, b := range group {
		n += len(b.ops)
		sync = sync || !b.logged
	}
	s.buf = append(s.buf[:0], make([]byte, recordHeader)...)
	s.buf = binary.AppendUvarint(s.buf, uint64(n))
	for _, b := range group {
		s.buf = appendOps(s.buf, b.ops)
	}
	sealRecord(s.buf, s.walGen)
	begin := time.Now()
	err := s.writeLog(s.buf, sync)
	if observe != nil && err == nil {
		observe(time.Since(begin), len(group))
	}
	s.mu.Lock()
	s.commits++
	switch {
	case err != nil:
	case sync:
		s.syncs++
		s.unsynced = false
	case !s.unsynced:
		s.unsynced = true
		s.poke() // the committer syncs it lazySyncDelay from now
	}
	notify := s.notify[:0]
	for _, b := range group {
		if err == nil {
			s.unapplied = append(s.unapplied, b.ops...)
		}
		b.done, b.err = true, err
		if b.notify != nil {
			notify = append(notify, b.notify)
		}
	}
	clear(group)
	s.spare = group
	if len(notify) > 0 {
		// Outside the lock (a callback may Get or Submit) but before the
		// next round can start, so that callbacks come in batch order.
		s.notify = nil
		s.mu.Unlock()
		for _, f := range notify {
			f(err)
		}
		clear(notify)
		s.mu.Lock()
		s.notify = notify
	}
	s.busy = false
	s.roundDone.Broadcast()
	if len(s.unapplied) >= checkpointOps {
		s.poke()
	}
}

// KnownBucket reports whether b is one of the store's buckets (the
// constants above); batches naming another are refused.
func KnownBucket(b string) bool {
	for _, x := range buckets {
		if x == b {
			return true
		}
	}
	return false
}

func (s *Bolt) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// committer runs in the background: it commits batches nobody waits for,
// syncs records of logged batches lazySyncDelay after the first of them
// was written, checkpoints (after checkpointInterval, past checkpointOps
// operations, on flush requests and at Close) and ends after Close.
func (s *Bolt) committer() {
	defer close(s.done)
	timer := time.NewTicker(checkpointInterval)
	defer timer.Stop()
	lazy := time.NewTimer(time.Hour)
	lazy.Stop()
	lazyArmed, lazyDue := false, false
	for {
		s.mu.Lock()
		for s.busy {
			s.roundDone.Wait()
		}
		if len(s.pending) > 0 {
			s.round()
		}
		closed := s.closed
		flush := s.flushReq
		s.flushReq = nil
		if len(flush) > 0 || closed || len(s.unapplied) >= checkpointOps ||
			len(s.unapplied) > 0 && time.Since(s.lastCkpt) >= checkpointInterval {
			err := s.exclusive(s.checkpoint)
			if err == nil {
				s.unsynced = false // in bbolt, synced
			}
			for _, c := range flush {
				c <- err
			}
		}
		if lazyDue && s.unsynced {
			if err := s.exclusive(s.syncLog); err == nil {
				s.syncs++
				s.unsynced = false
			}
		}
		lazyDue = false
		if s.unsynced && !lazyArmed {
			lazy.Reset(lazySyncDelay)
			lazyArmed = true
		}
		more := len(s.pending) > 0 || len(s.flushReq) > 0
		s.mu.Unlock()
		if more {
			continue
		}
		if closed {
			return
		}
		select {
		case <-s.wake:
		case <-timer.C:
		case <-lazy.C:
			lazyArmed, lazyDue = false, true
		}
	}
}

// exclusive runs f once no round, checkpoint or sync is under way, with
// busy set so that none starts meanwhile and s.mu released. It is called
// and returns with s.mu held.
func (s *Bolt) exclusive(f func() error) error {
	for s.busy {
		s.roundDone.Wait()
	}
	s.busy = true
	s.mu.Unlock()
	err := f()
	s.mu.Lock()
	s.busy = false
	s.roundDone.Broadcast()
	return err
}

// syncLog makes every record written so far durable. Runs with busy set
// (exclusive).
func (s *Bolt) syncLog() error {
	return fdatasyncHoldingP(s.wal.Fd())
}

// writeLog writes a record at the log's current offset and, if sync is
// set, makes it durable (with every record before it). A record that
// would end past the file's size is padded with zeros to the next
// multiple of walGrowth, so that the records after it are written inside
// the file and their fdatasync has no size to record.
func (s *Bolt) writeLog(b []byte, sync bool) error {
	end := s.walOff + int64(len(b))
	if end > s.walSize {
		grown := (end + walGrowth - 1) / walGrowth * walGrowth
		b = append(b, make([]byte, grown-end)...)
	}
	if _, err := s.wal.WriteAt(b, s.walOff); err != nil {
		return fmt.Errorf("store: write log: %w", err)
	}
	s.walSize = max(s.walSize, s.walOff+int64(len(b)))
	s.walOff = end
	if !sync {
		return nil
	}
	if err := fdatasyncHoldingP(s.wal.Fd()); err != nil {
		return fmt.Errorf("store: sync log: %w", err)
	}
	return nil
}

// checkpoint applies the logged operations to bbolt (durably) and starts
// a new log generation at offset 0. Runs on the committer goroutine, with
// busy set.
func (s *Bolt) checkpoint() error {
	s.lastCkpt = time.Now()
	if len(s.unapplied) == 0 {
		return nil
	}
	ops := s.unapplied
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := applyOps(tx, ops); err != nil {
			return err
		}
		return putGeneration(tx, s.walGen+1)
	})
	if err != nil {
		return fmt.Errorf("store: checkpoint: %w", err)
	}
	s.mu.Lock()
	clear(s.unapplied) // drop the values; keep the array for the next round
	s.unapplied = s.unapplied[:0]
	s.mu.Unlock()
	s.walGen++
	s.walOff = 0
	if s.walSize > walMaxSize {
		if err := s.wal.Truncate(0); err != nil {
			return fmt.Errorf("store: shrink log: %w", err)
		}
		s.walSize = 0
	}
	return nil
}

func applyOps(tx *bolt.Tx, ops []Op) error {
	for _, op := range ops {
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
	return nil
}

// Log record: 4-byte big-endian payload length, 4-byte CRC-32C of the
// generation and payload, 8-byte big-endian generation, payload =
// uvarint count, then per op: kind byte (0 put, 1 delete), bucket, key,
// value as uvarint-length-prefixed bytes.

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Commits returns the number of log writes (rounds) so far, each shared
// by every batch of its group.
func (s *Bolt) Commits() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits
}

// Syncs returns the number of fdatasyncs of the log so far: one per round
// with a batch submitted by Submit or SubmitAsync, and one per lazy sync
// of logged batches.
func (s *Bolt) Syncs() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncs
}

// flush forces a checkpoint so that bbolt holds every acknowledged batch.
func (s *Bolt) flush() error {
	c := make(chan error, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.flushReq = append(s.flushReq, c)
	s.mu.Unlock()
	s.poke()
	return <-c
}

// ForEach implements Store.
func (s *Bolt) ForEach(bucket string, fn func(key string, value []byte) error) error {
	if err := s.flush(); err != nil {
		return err
	}
	return s.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(bucket))
		if bk == nil {
			return fmt.Errorf("store: unknown bucket %q", bucket)
		}
		return bk.ForEach(func(k, v []byte) error { return fn(string(k), v) })
	})
}

// Get implements Store. Acknowledged batches not yet checkpointed are
// looked up in memory, so a Get never forces a checkpoint.
func (s *Bolt) Get(bucket, key string) ([]byte, error) {
	s.mu.Lock()
	for i := len(s.unapplied) - 1; i >= 0; i-- {
		if op := s.unapplied[i]; op.Bucket == bucket && op.Key == key {
			s.mu.Unlock()
			if op.Delete {
				return nil, nil
			}
			return append([]byte(nil), op.Value...), nil
		}
	}
	s.mu.Unlock()
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

// Close implements Store: outstanding batches are committed and applied.
func (s *Bolt) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.poke()
	<-s.done
	werr := s.wal.Close()
	if err := s.db.Close(); err != nil {
		return err
	}
	return werr
}
