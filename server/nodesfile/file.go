// Package nodesfile reads and writes server_priv/nodes (spec 12 §9.1,
// spec 13), the node list an administrator may write before starting the
// server and which the server keeps in step with its node table: ParseLine
// reads one line, Line writes one, and File queues and writes the table's
// changes, durable before the change is acknowledged.
package nodesfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// File keeps server_priv/nodes in step with the node table without
// rewriting it for every created node: a created node is one line
// appended to the file (the table's order is the file's, and a node is
// created at the end), any other change rewrites the whole file through
// nodes.new and a rename. Changes are queued in the table's order and
// written by the first of their waiters, as many as are queued at once
// (group commit), each write synced before its waiters return, so that
// a node whose creation was acknowledged is in the file after a crash.
type File struct {
	path string

	mu       sync.Mutex
	idle     sync.Cond // signalled when a write ends
	loaded   bool      // lines holds the table (set by the first change)
	lines    []string  // the file's lines once every queued change is written
	onDisk   int       // lines[:onDisk] are the file's content, unless rewrite
	rewrite  bool      // the file must be written whole
	queue    []*change
	flushing bool
}

// change is one queued change; its fields are guarded by File.mu.
type change struct {
	done bool
	err  error
}

// New returns the File that writes path, which is read (to append to it
// if it holds the table already) at the first change.
func New(path string) *File {
	f := &File{path: path}
	f.idle.L = &f.mu
	return f
}

// load starts the model from the node table's lines, of which the file
// should hold the first onDisk. It is appended to only if it holds
// exactly those; otherwise (no file, or an administrator's file with
// comments or ranges) the first write rewrites it.
func (f *File) load(lines []string, onDisk int) {
	f.lines, f.onDisk, f.rewrite, f.loaded = lines, onDisk, true, true
	if b, err := os.ReadFile(f.path); err == nil && string(b) == joinLines(lines[:onDisk]) {
		f.rewrite = false
	}
}

// Add queues the creation of the node of line, the last of the table's
// lines (all returns them), and returns the wait for it to be on disk.
// Changes are queued with the node table's lock held, in the table's
// order; the wait is done without it.
func (f *File) Add(all func() []string, line string) func() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.loaded {
		lines := all()
		f.load(lines, max(len(lines)-1, 0))
	} else {
		f.lines = append(f.lines, line)
	}
	return f.enqueue()
}

// Replace queues a change that leaves the table's lines as lines, and
// returns the wait for it to be on disk.
func (f *File) Replace(lines []string) func() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loaded, f.lines, f.rewrite = true, lines, true
	return f.enqueue()
}

// enqueue queues a change. Called with f.mu held.
func (f *File) enqueue() func() error {
	c := &change{}
	f.queue = append(f.queue, c)
	return func() error { return f.wait(c) }
}

// wait returns once change c is written, writing it (and whatever else
// is queued) itself unless another waiter is writing.
func (f *File) wait(c *change) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for !c.done {
		if f.flushing {
			f.idle.Wait()
			continue
		}
		f.flush()
	}
	return c.err
}

// flush writes every queued change. Called with f.mu held, which it
// releases while writing.
func (f *File) flush() {
	batch := f.queue
	f.queue = nil
	f.flushing = true
	whole := f.rewrite
	// Lines are only ever appended to f.lines or the slice replaced, so
	// this view stays valid while the lock is released.
	lines, onDisk := f.lines[:len(f.lines):len(f.lines)], f.onDisk
	f.rewrite = false // a replace while writing sets it again
	f.mu.Unlock()
	var err error
	if !whole {
		err = appendFileSynced(f.path, joinLines(lines[onDisk:]))
	}
	if whole || err != nil {
		// An append that failed (the file was removed, say) may have
		// left part of its data: write the file whole.
		err = writeFileSynced(f.path, joinLines(lines))
	}
	f.mu.Lock()
	f.flushing = false
	switch {
	case err != nil:
		f.rewrite = true // the file's content is unknown now
	case !f.rewrite:
		f.onDisk = len(lines)
	}
	for _, c := range batch {
		c.done, c.err = true, err
	}
	f.idle.Broadcast()
}

func joinLines(lines []string) string {
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	var b strings.Builder
	b.Grow(size)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// writeFileSynced replaces path with data through path.new and a rename,
// syncing the file and then the directory.
func writeFileSynced(path, data string) error {
	tmp := path + ".new"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("nodes file: %w", err)
	}
	err = writeSyncClose(f, data)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("nodes file: %w", err)
	}
	return nil
}

// appendFileSynced appends data to the existing file path and syncs it.
func appendFileSynced(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("nodes file: %w", err)
	}
	if err := writeSyncClose(f, data); err != nil {
		return fmt.Errorf("nodes file: %w", err)
	}
	return nil
}

// writeSyncClose writes data to f, syncs and closes it, and returns the
// first error.
func writeSyncClose(f *os.File, data string) error {
	_, err := f.WriteString(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
