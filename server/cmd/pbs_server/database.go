package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"gopbs/internal/logline"
	"gopbs/server/failover"
	"gopbs/server/pbslog"
	"gopbs/server/store/pgstore"
)

// databaseURL returns the PostgreSQL connection URL the server is to keep
// its state in: the -database flag, else server_priv/database_url, else
// "" (the embedded store).
func databaseURL(flagValue, home string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	return failover.ReadURL(filepath.Join(home, "server_priv", failover.URLFile))
}

// activeServer is this process as the active server of a PostgreSQL
// database: its failover lease and its store.
type activeServer struct {
	lease *failover.Lease
	store *pgstore.Store
	log   *pbslog.Logger
}

// becomeActive waits, as a standby, until this process holds the
// database's failover lock, then claims the database and opens its store
// (emptied for -t create). standby is called when another server is
// found active. What it does is logged in the server log (or logFile).
func becomeActive(url, home, logFile, name string, create bool, standby func()) (*activeServer, error) {
	var log *pbslog.Logger
	var err error
	if logFile != "" {
		log, err = pbslog.NewLoggerFile(logFile, "PBS_Server")
	} else {
		dir := filepath.Join(home, "server_logs")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("pbs_server: %w", err)
		}
		log, err = pbslog.NewLogger(dir, "PBS_Server")
	}
	if err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) {
		log.Logf(logline.EventSystem|logline.EventForce, logline.ClassServer, "failover", format, args...)
	}
	lease, st, err := failover.Become(context.Background(), url, failover.Options{Name: name, Logf: logf, Standby: standby})
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("pbs_server: %w", err)
	}
	if create {
		if err := st.Clear(context.Background()); err != nil {
			st.Close()
			lease.Release()
			log.Close()
			return nil, fmt.Errorf("pbs_server: %w", err)
		}
	}
	logf("active: this server holds the failover lock and serves the database")
	a := &activeServer{lease: lease, store: st, log: log}
	return a, nil
}

// exitOnLoss ends the process as soon as the lease is lost: another
// server may be active from then on, and this one must not serve a
// moment longer. What it acknowledged is committed; later commits are
// fenced off (pgstore.ErrFenced).
func (a *activeServer) exitOnLoss() {
	<-a.lease.Lost()
	msg := fmt.Sprintf("lost the failover lock, stopping at once: %v", a.lease.Err())
	a.log.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "failover", msg)
	a.log.Close()
	fmt.Fprintln(os.Stderr, "pbs_server: "+msg)
	os.Exit(3)
}

// release gives the lock up after a clean shutdown, so that a standby
// takes over at once.
func (a *activeServer) release() {
	if err := a.lease.Release(); err != nil {
		a.log.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "failover", err.Error())
	} else {
		a.log.Log(logline.EventSystem|logline.EventForce, logline.ClassServer, "failover", "released the failover lock")
	}
	a.log.Close()
}
