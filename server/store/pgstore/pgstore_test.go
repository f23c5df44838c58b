package pgstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"gopbs/internal/e2e"
	"gopbs/internal/pgtest"
	"gopbs/server/store"
)

func TestMain(m *testing.M) {
	if os.Getenv("PGSTORE_HELPER_URL") != "" {
		helper(os.Getenv("PGSTORE_HELPER_URL"))
		return
	}
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keys(t *testing.T, s *Store, bucket string) []string {
	t.Helper()
	var out []string
	if err := s.ForEach(bucket, func(k string, v []byte) error {
		out = append(out, k+"="+string(v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestApplyGetForEachReopen(t *testing.T) {
	pg := pgtest.Start(t)
	s := open(t, pg.URL)
	if err := s.Apply(store.Put(store.Jobs, "2.vm", []byte("b")), store.Put(store.Jobs, "10.vm", []byte("a")),
		store.Put(store.Jobs, "3[].vm", []byte("c")), store.Put(store.Script, "2.vm", nil)); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(store.Del(store.Jobs, "3[].vm"), store.Put(store.Jobs, "2.vm", []byte("B")), store.Del(store.Jobs, "none")); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, s, store.Jobs); !slices.Equal(got, []string{"10.vm=a", "2.vm=B"}) {
		t.Errorf("jobs %v", got)
	}
	if v, err := s.Get(store.Script, "2.vm"); err != nil || v == nil || len(v) != 0 {
		t.Errorf("empty value: %q %v", v, err)
	}
	if v, err := s.Get(store.Jobs, "3[].vm"); err != nil || v != nil {
		t.Errorf("deleted key: %q %v", v, err)
	}
	if err := s.Apply(store.Put("elsewhere", "k", nil)); err == nil || !strings.Contains(err.Error(), "unknown bucket") {
		t.Errorf("unknown bucket: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(store.Put(store.Jobs, "late", nil)); err != store.ErrClosed {
		t.Errorf("after Close: %v", err)
	}
	s = open(t, pg.URL)
	defer s.Close()
	if v, _ := s.Get(store.Jobs, "2.vm"); string(v) != "B" {
		t.Errorf("after reopening: %q", v)
	}
}

// TestGroupCommit holds the row the first round writes locked from
// another connection while 50 more batches are submitted: they wait
// behind that round and share the next transaction, so the 51 batches
// take at most two commits.
func TestGroupCommit(t *testing.T) {
	pg := pgtest.Start(t)
	s := open(t, pg.URL)
	defer s.Close()
	if err := s.Apply(store.Put(store.Jobs, "lock", []byte("0"))); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	other, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM gopbs_objects WHERE bucket = 'jobs' AND key = 'lock'::bytea FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	before := s.Commits()
	waits := []func() error{s.Submit(store.Put(store.Jobs, "lock", []byte("1")))}
	for i := range 50 {
		waits = append(waits, s.Submit(store.Put(store.Jobs, "k"+strconv.Itoa(i), []byte(strconv.Itoa(i)))))
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for _, w := range waits {
		if err := w(); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Commits() - before; n < 1 || n > 2 {
		t.Errorf("51 batches took %d commits, want 1 or 2", n)
	}
	if got := keys(t, s, store.Jobs); len(got) != 51 {
		t.Errorf("%d keys after the batches", len(got))
	}
}

// TestAsyncAndLogged: SubmitAsync's callback comes after the batch is
// visible; logged batches are committed like the others.
func TestAsyncAndLogged(t *testing.T) {
	pg := pgtest.Start(t)
	s := open(t, pg.URL)
	defer s.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	s.SubmitAsync(func(err error) {
		defer wg.Done()
		if err != nil {
			t.Error(err)
		}
		if v, _ := s.Get(store.Nodes, "n1"); string(v) != "up" {
			t.Errorf("async batch not visible in its callback: %q", v)
		}
	}, store.Put(store.Nodes, "n1", []byte("up")))
	wg.Wait()
	if err := s.SubmitLogged(store.Put(store.Jobs, "1.vm", []byte("comment")))(); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Get(store.Jobs, "1.vm"); string(v) != "comment" {
		t.Errorf("logged batch: %q", v)
	}
	refused := make(chan error, 1)
	s.SubmitAsync(func(err error) { refused <- err }, store.Put("nowhere", "k", nil))
	if err := <-refused; err == nil {
		t.Error("async batch of an unknown bucket accepted")
	}
}

// TestDatabaseDown: batches fail while the database is down (nothing is
// acknowledged that is not committed) and succeed again once it is back;
// what was committed survived its immediate shutdown.
func TestDatabaseDown(t *testing.T) {
	pg := pgtest.Start(t)
	s := open(t, pg.URL)
	defer s.Close()
	if err := s.Apply(store.Put(store.Jobs, "before", []byte("1"))); err != nil {
		t.Fatal(err)
	}
	pg.Stop()
	if err := s.Apply(store.Put(store.Jobs, "during", []byte("2"))); err == nil {
		t.Fatal("a batch was acknowledged while the database was down")
	}
	pg.Restart()
	if err := s.Apply(store.Put(store.Jobs, "after", []byte("3"))); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, s, store.Jobs); !slices.Equal(got, []string{"after=3", "before=1"}) {
		t.Errorf("jobs %v", got)
	}
}

// helper is the child process of TestKilledClient: it applies batches
// from 8 goroutines and prints each key once its batch is acknowledged.
func helper(url string) {
	s, err := Open(context.Background(), url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				k := fmt.Sprintf("g%d-%d", g, i)
				if err := s.Apply(store.Put(store.Jobs, k, []byte(k))); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Println(k)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestKilledClient kills (SIGKILL) a process applying batches, then
// crashes the database too (immediate shutdown): every batch the process
// had seen acknowledged is there after both restarts.
func TestKilledClient(t *testing.T) {
	pg := pgtest.Start(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), "PGSTORE_HELPER_URL="+pg.URL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	var acked []string
	for len(acked) < 400 && sc.Scan() {
		acked = append(acked, sc.Text())
	}
	cmd.Process.Signal(syscall.SIGKILL)
	for sc.Scan() {
		acked = append(acked, sc.Text())
	}
	cmd.Wait()
	if len(acked) < 400 {
		t.Fatalf("the helper acknowledged %d batches before it ended", len(acked))
	}
	pg.Stop()
	pg.Restart()
	s := open(t, pg.URL)
	defer s.Close()
	for _, k := range acked {
		if v, err := s.Get(store.Jobs, k); err != nil || string(v) != k {
			t.Fatalf("acknowledged %s lost: %q %v", k, v, err)
		}
	}
}

func TestMigrations(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	version := func() int {
		var v int
		if err := pool.QueryRow(ctx, "SELECT max(version) FROM gopbs_schema").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := migrate(ctx, pool, migrations); err != nil {
		t.Fatal(err)
	}
	if version() != SchemaVersion() {
		t.Fatalf("version %d after creating, want %d", version(), SchemaVersion())
	}
	// a later version: applied once, on top of the data
	s := open(t, pg.URL)
	if err := s.Apply(store.Put(store.Queues, "batch", []byte("q"))); err != nil {
		t.Fatal(err)
	}
	s.Close()
	next := append(slices.Clone(migrations), `ALTER TABLE gopbs_objects ADD COLUMN note text NOT NULL DEFAULT ''`)
	for range 2 {
		if err := migrate(ctx, pool, next); err != nil {
			t.Fatal(err)
		}
	}
	if version() != len(next) {
		t.Errorf("version %d after upgrading, want %d", version(), len(next))
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM gopbs_objects WHERE note = ''").Scan(&n); err != nil || n != 1 {
		t.Errorf("rows after the upgrade: %d %v", n, err)
	}
	// an older server refuses the newer schema
	if _, err := Open(ctx, pg.URL); err == nil || !strings.Contains(err.Error(), "newer than this pbs_server knows") {
		t.Errorf("newer schema: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"); err == nil {
		t.Error("Open succeeded without a database")
	}
	if _, err := Open(context.Background(), "::not a url"); err == nil {
		t.Error("Open accepted a bad URL")
	}
}

// TestClaimFences: Claim waits for a round of the previous leader still
// under way (here a transaction holding the leader row as rounds do),
// and the previous leader's later rounds fail with ErrFenced.
func TestClaimFences(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	first, err := Claim(ctx, pg.URL, "a")
	if err != nil {
		t.Fatal(err)
	}
	a, err := OpenWith(ctx, pg.URL, Options{Fence: first})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Apply(store.Put(store.Jobs, "1.srv", []byte("1"))); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, fenceSQL); err != nil {
		t.Fatal(err)
	}
	claimed := make(chan int64, 1)
	go func() {
		tok, err := Claim(ctx, pg.URL, "b")
		if err != nil {
			t.Error(err)
		}
		claimed <- tok
	}()
	watch, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	e2e.WaitFor(t, "Claim waiting for the round", 20*time.Second, func() bool {
		var n int
		watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO gopbs_leader%'`).Scan(&n)
		return n > 0
	})
	select {
	case <-claimed:
		t.Fatal("Claim did not wait for the round under way")
	default:
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	second := <-claimed
	if second != first+1 {
		t.Errorf("tokens %d then %d", first, second)
	}
	if err := a.Apply(store.Put(store.Jobs, "2.srv", []byte("2"))); !errors.Is(err, ErrFenced) {
		t.Errorf("round after the claim: %v", err)
	}
	b, err := OpenWith(ctx, pg.URL, Options{Fence: second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Apply(store.Put(store.Jobs, "2.srv", []byte("2"))); err != nil {
		t.Errorf("round of the new leader: %v", err)
	}
	if l, err := b.CurrentLeader(ctx); err != nil || l.Holder != "b" || l.Token != second {
		t.Errorf("leader %+v %v", l, err)
	}
}

// BenchmarkApplyParallel applies one-put batches (a job record's size)
// from 8 goroutines per processor, each waiting for its commit, as
// submitting clients do; "fenced" is the store as pbs_server opens it
// (a leader token checked by every round).
func BenchmarkApplyParallel(b *testing.B) {
	pg := pgtest.Start(b)
	for _, fenced := range []bool{false, true} {
		name := "plain"
		if fenced {
			name = "fenced"
		}
		b.Run(name, func(b *testing.B) {
			var opt Options
			if fenced {
				tok, err := Claim(context.Background(), pg.URL, "bench")
				if err != nil {
					b.Fatal(err)
				}
				opt.Fence = tok
			}
			s, err := OpenWith(context.Background(), pg.URL, opt)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			val := make([]byte, 1500)
			var n atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(p *testing.PB) {
				for p.Next() {
					k := name + strconv.FormatInt(n.Add(1), 10) + ".vm"
					if err := s.Apply(store.Put(store.Jobs, k, val), store.Put(store.Script, k, val[:100])); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/float64(s.Commits()), "batches/commit")
		})
	}
}
