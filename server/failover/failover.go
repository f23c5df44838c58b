// Package failover makes one of several pbs_server processes sharing a
// PostgreSQL database the active one, and the others its standbys.
//
// The active server holds a session-level PostgreSQL advisory lock
// (LockKey) on a connection of its own. A standby waits for the lock in
// PostgreSQL itself (pg_advisory_lock), so that it gets it as soon as the
// database releases it: when the active server's process dies (its
// connection closes), when its host vanishes (the lock connection sets
// short TCP keep-alive and user time-outs, so PostgreSQL drops it within
// seconds), or when an administrator ends its session. Having the lock,
// the new active server claims the database (pgstore.Claim), which
// fences off any commit of the previous one still under way, and opens
// its store with the new token (Become).
//
// An active server that loses its lock connection must stop serving at
// once: the Lease's Lost channel is closed when a liveness query on the
// connection fails, and pbs_server exits then. Its store's commits fail
// from the moment another server claims the database, so nothing it
// acknowledges after losing the lock can be lost.
package failover

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// LockKey is the advisory lock the active server holds ("GoPBS" and 1 in
// ASCII; the schema's migrations use "GoPBS").
const LockKey int64 = 0x476f50425331

// Defaults of Options.
const (
	DefaultRetry = time.Second
	DefaultPing  = time.Second
)

// Options adjust Acquire.
type Options struct {
	// Name identifies this server in PostgreSQL (application_name) and
	// in what a standby logs about the active server.
	Name string
	// Retry is the pause before connecting again after the database
	// could not be reached or the connection broke while waiting.
	Retry time.Duration
	// Ping is the interval of the liveness query on a held lock's
	// connection; the lease is lost when one fails or takes longer than
	// three intervals.
	Ping time.Duration
	// Logf, if set, is told what the standby does (waiting, the holder,
	// connection failures).
	Logf func(format string, args ...any)
	// Standby, if set, is called once, when the lock is first found held
	// by another server (this process is a standby from then on).
	Standby func()
}

func (o *Options) defaults() {
	if o.Retry <= 0 {
		o.Retry = DefaultRetry
	}
	if o.Ping <= 0 {
		o.Ping = DefaultPing
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
}

// Lease is a held failover lock.
type Lease struct {
	conn *pgx.Conn
	ping time.Duration

	lost     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	stopped  chan struct{}
	mu       sync.Mutex
	err      error
}

// lockConfig parses url for the lock connection: the application name
// and, unless the URL sets them, keep-alive and user time-outs short
// enough for PostgreSQL to drop the connection of a vanished host within
// seconds (and with it the lock), and for this side to notice a vanished
// database as soon.
func lockConfig(url, name string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("failover: %w", err)
	}
	params := map[string]string{
		"application_name":        "pbs_server " + name,
		"tcp_keepalives_idle":     "2",
		"tcp_keepalives_interval": "1",
		"tcp_keepalives_count":    "3",
		"tcp_user_timeout":        "5000",
	}
	for k, v := range params {
		if _, set := cfg.RuntimeParams[k]; !set {
			cfg.RuntimeParams[k] = v
		}
	}
	d := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 2 * time.Second, Interval: time.Second, Count: 3}}
	if cfg.ConnectTimeout > 0 {
		d.Timeout = cfg.ConnectTimeout
	} else {
		d.Timeout = 10 * time.Second
	}
	cfg.DialFunc = d.DialContext
	return cfg, nil
}

// Acquire returns once this process holds the failover lock of the
// database at url, waiting as a standby while another holds it and
// trying again every Options.Retry while the database cannot be reached.
// It fails only for a URL it cannot parse or when ctx ends.
func Acquire(ctx context.Context, url string, opt Options) (*Lease, error) {
	opt.defaults()
	cfg, err := lockConfig(url, opt.Name)
	if err != nil {
		return nil, err
	}
	standby := false
	for {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			var held bool
			held, err = tryLock(ctx, conn, opt, &standby)
			if held {
				return newLease(conn, opt.Ping), nil
			}
			conn.Close(context.Background())
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("failover: %w", ctx.Err())
		}
		opt.Logf("database unreachable, trying again in %v: %v", opt.Retry, err)
		select {
		case <-time.After(opt.Retry):
		case <-ctx.Done():
			return nil, fmt.Errorf("failover: %w", ctx.Err())
		}
	}
}

// tryLock takes the lock on conn, waiting for it if another session
// holds it; false with an error when the wait ended otherwise.
func tryLock(ctx context.Context, conn *pgx.Conn, opt Options, standby *bool) (bool, error) {
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", LockKey).Scan(&got); err != nil {
		return false, err
	}
	if got {
		return true, nil
	}
	if !*standby {
		*standby = true
		if opt.Standby != nil {
			opt.Standby()
		}
	}
	opt.Logf("standing by: the active server is %s", holder(ctx, conn))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", LockKey); err != nil {
		return false, err
	}
	return true, nil
}

// holder describes the session holding the lock, for the log.
func holder(ctx context.Context, conn *pgx.Conn) string {
	const q = `SELECT a.pid, a.application_name, coalesce(host(a.client_addr), 'local')
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 1`
	var pid int
	var app, addr string
	key := uint64(LockKey)
	err := conn.QueryRow(ctx, q, int64(key>>32), int64(key&0xffffffff)).Scan(&pid, &app, &addr)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return fmt.Sprintf("%q (PostgreSQL backend %d, from %s)", app, pid, addr)
}

func newLease(conn *pgx.Conn, ping time.Duration) *Lease {
	l := &Lease{conn: conn, ping: ping, lost: make(chan struct{}), stop: make(chan struct{}), stopped: make(chan struct{})}
	go l.watch()
	return l
}

// watch queries the lock connection every ping interval until the
// lease is released or a query fails.
func (l *Lease) watch() {
	defer close(l.stopped)
	t := time.NewTicker(l.ping)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*l.ping)
		_, err := l.conn.Exec(ctx, "SELECT 1")
		cancel()
		if err != nil {
			l.mu.Lock()
			l.err = fmt.Errorf("failover: lock connection lost: %w", err)
			l.mu.Unlock()
			close(l.lost)
			l.conn.Close(context.Background())
			return
		}
	}
}

// Lost is closed when the lease has been lost: the lock connection
// failed, and another server may hold the lock now.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Err says why the lease was lost (nil while it is held).
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// ErrLost is returned by Release for a lease lost before.
var ErrLost = errors.New("failover: lease already lost")

// Release gives the lock up (a standby takes over) and closes its
// connection.
func (l *Lease) Release() error {
	select {
	case <-l.lost:
		<-l.stopped
		return ErrLost
	default:
	}
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.stopped
	select {
	case <-l.lost:
		return ErrLost
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := l.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", LockKey)
	if cerr := l.conn.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("failover: release: %w", err)
	}
	return nil
}
