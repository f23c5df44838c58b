package failover

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"gopbs/internal/e2e"
	"gopbs/internal/pgtest"
	"gopbs/server/store"
	"gopbs/server/store/pgstore"
)

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// fast are options for tests: quick retries and liveness queries.
func fast(name string) Options {
	return Options{Name: name, Retry: 50 * time.Millisecond, Ping: 50 * time.Millisecond}
}

// backendOf returns the PostgreSQL backend pid holding the lock.
func backendOf(t *testing.T, c *pgx.Conn) int {
	t.Helper()
	var pid int
	err := c.QueryRow(context.Background(), `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND classid = $1 AND objid = $2 AND objsubid = 1`, int64(uint64(LockKey)>>32), int64(uint64(LockKey)&0xffffffff)).Scan(&pid)
	if err != nil {
		t.Fatalf("the lock's holder: %v", err)
	}
	return pid
}

// waiting reports whether a session of application name app waits for a
// lock.
func waiting(t *testing.T, c *pgx.Conn, app string) bool {
	t.Helper()
	var n int
	err := c.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

func admin(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// TestStandbyTakesOver: a second Acquire stands by (its Standby callback
// runs and its session waits on the lock in PostgreSQL) until the first
// lease is released, then holds the lock.
func TestStandbyTakesOver(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	a, err := Acquire(ctx, pg.URL, fast("a"))
	if err != nil {
		t.Fatal(err)
	}
	var stood atomic.Bool
	var logged atomic.Value
	optB := fast("b")
	optB.Standby = func() { stood.Store(true) }
	optB.Logf = func(f string, args ...any) { logged.Store(f) }
	got := make(chan *Lease, 1)
	go func() {
		b, err := Acquire(ctx, pg.URL, optB)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	adm := admin(t, pg.URL)
	e2e.WaitFor(t, "the standby waiting on the lock", 20*time.Second, func() bool { return waiting(t, adm, "pbs_server b") })
	if !stood.Load() {
		t.Error("the standby's Standby callback did not run")
	}
	select {
	case <-got:
		t.Fatal("the standby got the lock while it was held")
	default:
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	var b *Lease
	select {
	case b = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("the standby did not take the lock over")
	}
	if b == nil {
		t.FailNow()
	}
	defer b.Release()
	var app string
	if err := adm.QueryRow(ctx, "SELECT application_name FROM pg_stat_activity WHERE pid = $1", backendOf(t, adm)).Scan(&app); err != nil || app != "pbs_server b" {
		t.Errorf("holder after the take-over: %q %v", app, err)
	}
	if f, _ := logged.Load().(string); !strings.Contains(f, "standing by") {
		t.Errorf("the standby logged %q", f)
	}
}

// TestLostWhenTerminated: ending the active session (as PostgreSQL does
// for a vanished host, or an administrator with pg_terminate_backend)
// closes Lost, and a standby gets the lock.
func TestLostWhenTerminated(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	a, err := Acquire(ctx, pg.URL, fast("a"))
	if err != nil {
		t.Fatal(err)
	}
	adm := admin(t, pg.URL)
	if _, err := adm.Exec(ctx, "SELECT pg_terminate_backend($1)", backendOf(t, adm)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Lost():
	case <-time.After(20 * time.Second):
		t.Fatal("the lease was not lost")
	}
	if a.Err() == nil {
		t.Error("Err is nil after the loss")
	}
	if err := a.Release(); !errors.Is(err, ErrLost) {
		t.Errorf("Release of a lost lease: %v", err)
	}
	b, err := Acquire(ctx, pg.URL, fast("b"))
	if err != nil {
		t.Fatal(err)
	}
	b.Release()
}

// TestLostWhenDatabaseStops: a lease is lost when the database stops; a
// standby waiting meanwhile keeps trying and gets the lock once the
// database is back.
func TestLostWhenDatabaseStops(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	a, err := Acquire(ctx, pg.URL, fast("a"))
	if err != nil {
		t.Fatal(err)
	}
	pg.Stop()
	select {
	case <-a.Lost():
	case <-time.After(20 * time.Second):
		t.Fatal("the lease was not lost when the database stopped")
	}
	var tries atomic.Int32
	opt := fast("b")
	opt.Logf = func(f string, args ...any) {
		if strings.Contains(f, "unreachable") {
			tries.Add(1)
		}
	}
	got := make(chan *Lease, 1)
	go func() {
		b, err := Acquire(ctx, pg.URL, opt)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	e2e.WaitFor(t, "a failed connection attempt", 20*time.Second, func() bool { return tries.Load() > 0 })
	pg.Restart()
	select {
	case b := <-got:
		if b != nil {
			b.Release()
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no lock after the database came back")
	}
}

// TestBecomeFencesThePrevious: after a second server becomes active, the
// first one's store refuses to commit (ErrFenced), while everything it
// committed before is in the second one's.
func TestBecomeFencesThePrevious(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	a, sa, err := Become(ctx, pg.URL, fast("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	if err := sa.Apply(store.Put(store.Jobs, "1.srv", []byte("one"))); err != nil {
		t.Fatal(err)
	}
	type result struct {
		l *Lease
		s *pgstore.Store
	}
	got := make(chan result, 1)
	go func() {
		l, s, err := Become(ctx, pg.URL, fast("b"))
		if err != nil {
			t.Error(err)
		}
		got <- result{l, s}
	}()
	adm := admin(t, pg.URL)
	e2e.WaitFor(t, "the standby waiting on the lock", 20*time.Second, func() bool { return waiting(t, adm, "pbs_server b") })
	// a loses its lock without noticing (its session ends) and goes on
	// committing: the commits fail once b has claimed the database.
	if _, err := adm.Exec(ctx, "SELECT pg_terminate_backend($1)", backendOf(t, adm)); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.s == nil {
		t.FailNow()
	}
	defer r.l.Release()
	defer r.s.Close()
	if err := sa.Apply(store.Put(store.Jobs, "2.srv", []byte("two"))); !errors.Is(err, pgstore.ErrFenced) {
		t.Errorf("commit of the fenced-off server: %v", err)
	}
	if err := sa.Clear(ctx); !errors.Is(err, pgstore.ErrFenced) {
		t.Errorf("Clear by the fenced-off server: %v", err)
	}
	if v, _ := r.s.Get(store.Jobs, "1.srv"); string(v) != "one" {
		t.Errorf("the first server's commit, seen by the second: %q", v)
	}
	if v, _ := r.s.Get(store.Jobs, "2.srv"); v != nil {
		t.Errorf("the fenced-off commit is in the database: %q", v)
	}
	if err := r.s.Apply(store.Put(store.Jobs, "3.srv", []byte("three"))); err != nil {
		t.Errorf("commit of the new active server: %v", err)
	}
	l, err := r.s.CurrentLeader(ctx)
	if err != nil || l.Token != 2 || l.Holder != "b" {
		t.Errorf("leader %+v %v", l, err)
	}
	<-a.Lost()
}

func TestReadURL(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, URLFile)
	if u, err := ReadURL(p); u != "" || err != nil {
		t.Errorf("absent file: %q %v", u, err)
	}
	os.WriteFile(p, []byte("# the cluster's database\n\n  postgres://pbs@db/pbs  \nignored\n"), 0o600)
	if u, err := ReadURL(p); u != "postgres://pbs@db/pbs" || err != nil {
		t.Errorf("got %q %v", u, err)
	}
	os.WriteFile(p, []byte("# nothing\n"), 0o600)
	if _, err := ReadURL(p); err == nil {
		t.Error("a file without a URL accepted")
	}
	os.Chmod(p, 0o644)
	if _, err := ReadURL(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable file: %v", err)
	}
}

func TestAcquireBadURL(t *testing.T) {
	if _, err := Acquire(context.Background(), "::not a url", Options{}); err == nil {
		t.Error("a bad URL accepted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable", fast("x")); err == nil {
		t.Error("Acquire returned without a database")
	}
}
