package store

// The group commit: batches submitted by many goroutines are written to
// the log together, one write (and, unless logged, one fdatasync) per
// round, and applied to bbolt at checkpoints by the committer.

import (
	"encoding/binary"
	"fmt"
	"time"
)

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
