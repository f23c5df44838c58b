package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestApplyPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Put(Jobs, "1.vm", []byte("job1")), Put(Script, "1.vm", []byte("#!/bin/sh\n"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Put(Jobs, "2.vm", []byte("job2")), Del(Jobs, "1.vm")); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Put("nosuch", "k", nil)); err == nil {
		t.Fatal("unknown bucket accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Put(Jobs, "3.vm", nil)); err != ErrClosed {
		t.Fatalf("Apply after Close: %v", err)
	}
	s, err = OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var keys []string
	if err := s.ForEach(Jobs, func(k string, v []byte) error { keys = append(keys, k+"="+string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keys) != "[2.vm=job2]" {
		t.Fatalf("jobs = %v", keys)
	}
	v, err := s.Get(Script, "1.vm")
	if err != nil || string(v) != "#!/bin/sh\n" {
		t.Fatalf("script = %q, %v", v, err)
	}
}

func TestGroupCommitSharesTransactions(t *testing.T) {
	s, err := OpenBolt(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers, each = 16, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := s.Apply(Put(Jobs, fmt.Sprintf("%d-%d", w, i), []byte("x"))); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	n := 0
	s.ForEach(Jobs, func(string, []byte) error { n++; return nil })
	if n != writers*each {
		t.Fatalf("%d keys, want %d", n, writers*each)
	}
	if c := s.Commits(); c >= writers*each {
		t.Fatalf("%d commits for %d batches: no grouping", c, writers*each)
	}
}

// TestLogReplayAfterCrash simulates a crash: batches acknowledged but not
// yet checkpointed are recovered from the log; a torn record is dropped.
func TestLogReplayAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Put(Jobs, "1.vm", []byte("one")), Put(Script, "1.vm", []byte("s1"))); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(Del(Jobs, "1.vm"), Put(Jobs, "2.vm", []byte("two"))); err != nil {
		t.Fatal(err)
	}
	// "crash": copy the files as they are now, without Close.
	s.mu.Lock()
	unapplied := len(s.unapplied)
	s.mu.Unlock()
	crash := filepath.Join(t.TempDir(), "db")
	copyFile(t, path, crash)
	copyFile(t, path+".wal", crash+".wal")
	s.Close()
	// a torn trailing record
	f, _ := os.OpenFile(crash+".wal", os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{0, 0, 0, 40, 1, 2, 3})
	f.Close()
	r, err := OpenBolt(crash)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, _ := r.Get(Jobs, "2.vm"); string(v) != "two" {
		t.Fatalf("2.vm = %q (unapplied before crash: %d)", v, unapplied)
	}
	if v, _ := r.Get(Jobs, "1.vm"); v != nil {
		t.Fatalf("deleted 1.vm back: %q", v)
	}
	if v, _ := r.Get(Script, "1.vm"); string(v) != "s1" {
		t.Fatalf("script %q", v)
	}
}

// TestLogGenerations checks the reuse of the log file: after a
// checkpoint the next generation overwrites the file from the start, the
// file does not shrink, and a crash replays only the records of the
// current generation, never the older records still beyond them.
func TestLogGenerations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 3000)
	for i := range 20 {
		if err := s.Apply(Put(Jobs, fmt.Sprintf("old%d", i), big)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Apply(Put(Jobs, "gone", []byte("x"))); err != nil {
		t.Fatal(err)
	}
	if err := s.flush(); err != nil { // checkpoint: a new generation
		t.Fatal(err)
	}
	fi, err := os.Stat(path + ".wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 || fi.Size()%walGrowth != 0 {
		t.Fatalf("log size %d, want a non-zero multiple of %d", fi.Size(), walGrowth)
	}
	// The new generation is shorter than the old one, whose records
	// (among them the put of "gone") remain further on in the file.
	if err := s.Apply(Del(Jobs, "gone"), Put(Jobs, "new", []byte("y"))); err != nil {
		t.Fatal(err)
	}
	crash := filepath.Join(t.TempDir(), "db")
	copyFile(t, path, crash)
	copyFile(t, path+".wal", crash+".wal")
	s.Close()
	if fi2, _ := os.Stat(path + ".wal"); fi2.Size() != fi.Size() {
		t.Errorf("log size changed from %d to %d", fi.Size(), fi2.Size())
	}
	r, err := OpenBolt(crash)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, _ := r.Get(Jobs, "gone"); v != nil {
		t.Fatalf("deleted key back from an older generation: %q", v)
	}
	if v, _ := r.Get(Jobs, "new"); string(v) != "y" {
		t.Fatalf("new = %q", v)
	}
	if v, _ := r.Get(Jobs, "old19"); len(v) != len(big) {
		t.Fatalf("old19 has %d bytes", len(v))
	}
}

func FuzzReadRecord(f *testing.F) {
	f.Add(appendRecord(nil, 3, encodeOps([]Op{Put(Jobs, "1", []byte("x"))})))
	f.Add([]byte{0, 0, 0, 40, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		gen, p, err := readRecord(bytes.NewReader(b))
		if err == nil && !bytes.Equal(appendRecord(nil, gen, p), b[:16+len(p)]) {
			t.Fatalf("record does not round-trip")
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func FuzzDecodeOps(f *testing.F) {
	f.Add(encodeOps([]Op{Put(Jobs, "1", []byte("x")), Del(Script, "2")}))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeOps(b)
	})
}

func TestGetSeesUncheckpointedBatches(t *testing.T) {
	s, err := OpenBolt(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Apply(Put(Script, "1.vm", []byte("a")))
	s.Apply(Put(Script, "1.vm", []byte("b")), Put(Script, "2.vm", []byte("c")))
	s.Apply(Del(Script, "2.vm"))
	if v, _ := s.Get(Script, "1.vm"); string(v) != "b" {
		t.Fatalf("1.vm = %q", v)
	}
	if v, _ := s.Get(Script, "2.vm"); v != nil {
		t.Fatalf("deleted 2.vm = %q", v)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get(Script, "1.vm"); string(v) != "b" {
		t.Fatalf("after checkpoint 1.vm = %q", v)
	}
}

// TestSubmitAsync: the callback of an asynchronous batch comes once the
// batch is durable and visible to Get, mixed with waited batches;
// refused batches are reported at once.
func TestSubmitAsync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	type result struct {
		i   int
		err error
		got []byte
	}
	results := make(chan result, n)
	var waits []func() error
	for i := range n {
		key := fmt.Sprintf("%d.vm", i)
		if i%10 == 0 {
			waits = append(waits, s.Submit(Put(Jobs, key, []byte(key))))
			continue
		}
		s.SubmitAsync(func(err error) {
			v, gerr := s.Get(Jobs, key)
			if gerr != nil {
				err = gerr
			}
			results <- result{i, err, v}
		}, Put(Jobs, key, []byte(key)))
	}
	for _, w := range waits {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	seen := make(map[int]bool)
	for range n - len(waits) {
		r := <-results
		if r.err != nil || string(r.got) != fmt.Sprintf("%d.vm", r.i) {
			t.Fatalf("batch %d: %v, Get in the callback: %q", r.i, r.err, r.got)
		}
		if seen[r.i] {
			t.Fatalf("batch %d reported twice", r.i)
		}
		seen[r.i] = true
	}
	refused := make(chan error, 1)
	s.SubmitAsync(func(err error) { refused <- err }, Put("nosuch", "k", nil))
	if err := <-refused; err == nil {
		t.Fatal("unknown bucket accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.SubmitAsync(func(err error) { refused <- err }, Put(Jobs, "x", nil))
	if err := <-refused; err != ErrClosed {
		t.Fatalf("after Close: %v", err)
	}
	// Every acknowledged batch survives a reopen.
	s, err = OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	count := 0
	s.ForEach(Jobs, func(string, []byte) error { count++; return nil })
	if count != n {
		t.Fatalf("%d jobs after reopen, want %d", count, n)
	}
}

// TestSubmitLogged checks that logged batches are acknowledged without an
// fdatasync each, that the log is synced lazily, that a durable batch's
// sync covers them, and that they survive a crash of the process.
func TestSubmitLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 200
	start := time.Now()
	before := s.Syncs()
	for i := range n {
		key := fmt.Sprintf("%d.vm", i)
		if err := s.SubmitLogged(Put(Jobs, key, []byte("comment "+key)))(); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	// At most one lazy sync per lazySyncDelay; a sync per batch would be n.
	if syncs, most := s.Syncs()-before, int64(elapsed/lazySyncDelay)+2; syncs > most {
		t.Fatalf("%d fdatasyncs for %d logged batches in %v (at most %d expected)", syncs, n, elapsed, most)
	}
	if got := s.Commits(); got < n {
		t.Fatalf("%d rounds for %d sequential batches", got, n)
	}

	// "crash": copy the files with no round, sync or checkpoint under way.
	crash := filepath.Join(t.TempDir(), "db")
	s.mu.Lock()
	for s.busy {
		s.roundDone.Wait()
	}
	copyFile(t, path, crash)
	copyFile(t, path+".wal", crash+".wal")
	s.mu.Unlock()
	r, err := OpenBolt(crash)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		key := fmt.Sprintf("%d.vm", i)
		if v, _ := r.Get(Jobs, key); string(v) != "comment "+key {
			t.Fatalf("after the crash %s = %q", key, v)
		}
	}
	r.Close()

	// The lazy sync comes without any further batch.
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		unsynced := s.unsynced
		s.mu.Unlock()
		if !unsynced {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("logged batches never synced")
		}
		time.Sleep(lazySyncDelay)
	}

	// A durable batch after a logged one syncs both.
	if err := s.SubmitLogged(Put(Jobs, "x.vm", []byte("x")))(); err != nil {
		t.Fatal(err)
	}
	syncs := s.Syncs()
	if err := s.Apply(Put(Jobs, "y.vm", []byte("y"))); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	unsynced := s.unsynced
	s.mu.Unlock()
	if unsynced || s.Syncs() <= syncs {
		t.Fatalf("durable batch left the log unsynced (syncs %d -> %d)", syncs, s.Syncs())
	}
}
