package store

// The write-ahead log: replay at open, log writes and syncs, checkpoints
// into bbolt.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

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
