package failover

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"gopbs/server/store/pgstore"
)

// URLFile is the name, under PBS_HOME/server_priv, of the file holding
// the database's connection URL.
const URLFile = "database_url"

// ReadURL returns the connection URL kept in the file at path: its first
// line that is neither blank nor a comment (#), "" when the file does not
// exist. A file others may read is refused, as it may hold a password.
func ReadURL(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("failover: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o007 != 0 {
		return "", fmt.Errorf("failover: %s is accessible to every user (chmod 600 it: it may hold a password)", path)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			return line, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("failover: read %s: %w", path, err)
	}
	return "", fmt.Errorf("failover: %s holds no URL", path)
}

// Become returns when this process is the active server of the database
// at url: it holds the failover lock (Acquire, waiting as a standby
// meanwhile), has claimed the database, and has its store open, fenced
// with the claim's token. A claim or open that fails (the database went
// away just then) gives the lock up and starts over after opt.Retry.
func Become(ctx context.Context, url string, opt Options) (*Lease, *pgstore.Store, error) {
	opt.defaults()
	for {
		lease, err := Acquire(ctx, url, opt)
		if err != nil {
			return nil, nil, err
		}
		st, err := claim(ctx, url, opt.Name)
		if err == nil {
			return lease, st, nil
		}
		lease.Release()
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("failover: %w", ctx.Err())
		}
		opt.Logf("could not take the database over, trying again in %v: %v", opt.Retry, err)
		select {
		case <-time.After(opt.Retry):
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("failover: %w", ctx.Err())
		}
	}
}

func claim(ctx context.Context, url, name string) (*pgstore.Store, error) {
	token, err := pgstore.Claim(ctx, url, name)
	if err != nil {
		return nil, err
	}
	return pgstore.OpenWith(ctx, url, pgstore.Options{Fence: token})
}
