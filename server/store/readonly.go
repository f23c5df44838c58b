package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ErrLocked is returned by OpenReadOnly when the database is held by a
// running server.
var ErrLocked = errors.New("store: database in use by a running server")

// lockWait is how long OpenReadOnly waits for the database lock.
const lockWait = 500 * time.Millisecond

// ReadOnly is a read-only view of a store left on disk by OpenBolt (for
// example by a stopped pbs_server): the bbolt file with the operations of
// its write-ahead log applied on top, in memory. It writes nothing, so
// the log is left for the server to replay. It is not safe for concurrent
// use.
type ReadOnly struct {
	db  *bolt.DB
	log []Op // operations of the write-ahead log, oldest first
}

// OpenReadOnly opens the database file at path (and reads its log
// <path>.wal) without modifying either. It fails with ErrLocked when a
// server has the database open.
func OpenReadOnly(path string) (*ReadOnly, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: lockWait})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	gen, err := walGeneration(db)
	if err != nil {
		db.Close()
		return nil, err
	}
	ops, err := readLog(path+".wal", gen)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		db.Close()
		return nil, err
	}
	return &ReadOnly{db: db, log: ops}, nil
}

// Get returns a copy of the current value of key in bucket (nil if
// absent).
func (r *ReadOnly) Get(bucket, key string) ([]byte, error) {
	for i := len(r.log) - 1; i >= 0; i-- {
		if op := r.log[i]; op.Bucket == bucket && op.Key == key {
			if op.Delete {
				return nil, nil
			}
			return bytes.Clone(op.Value), nil
		}
	}
	var out []byte
	err := r.db.View(func(tx *bolt.Tx) error {
		if bk := tx.Bucket([]byte(bucket)); bk != nil {
			if v := bk.Get([]byte(key)); v != nil {
				out = bytes.Clone(v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read %s/%s: %w", bucket, key, err)
	}
	return out, nil
}

// Keys returns the current keys of bucket that start with prefix, in key
// order.
func (r *ReadOnly) Keys(bucket, prefix string) ([]string, error) {
	present := map[string]bool{}
	err := r.db.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte(bucket))
		if bk == nil {
			return nil
		}
		c := bk.Cursor()
		for k, _ := c.Seek([]byte(prefix)); k != nil && bytes.HasPrefix(k, []byte(prefix)); k, _ = c.Next() {
			present[string(k)] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: read %s: %w", bucket, err)
	}
	for _, op := range r.log {
		if op.Bucket == bucket && strings.HasPrefix(op.Key, prefix) {
			present[op.Key] = !op.Delete
		}
	}
	var keys []string
	for k, ok := range present {
		if ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// Close releases the database file.
func (r *ReadOnly) Close() error { return r.db.Close() }
