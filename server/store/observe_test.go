package store

import (
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestSetObserver checks that every batch made durable is reported once,
// in the round that committed it.
func TestSetObserver(t *testing.T) {
	s, err := OpenBolt(filepath.Join(t.TempDir(), "db.bolt"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mu sync.Mutex
	var rounds, batches int
	s.SetObserver(func(d time.Duration, n int) {
		mu.Lock()
		defer mu.Unlock()
		if d < 0 || n < 1 {
			t.Errorf("round of %d batches in %v", n, d)
		}
		rounds++
		batches += n
	})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Apply(Put("jobs", string(rune('a'+i)), []byte("x"))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	if batches != 20 || rounds < 1 || rounds > 20 {
		t.Errorf("%d batches in %d rounds, want 20 batches", batches, rounds)
	}
	if int64(rounds) != s.Commits() {
		t.Errorf("%d rounds observed, %d commits", rounds, s.Commits())
	}
	mu.Unlock()
	s.SetObserver(nil)
	if err := s.Apply(Put("jobs", "z", []byte("y"))); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if batches != 20 {
		t.Errorf("observed after SetObserver(nil): %d batches", batches)
	}
}
