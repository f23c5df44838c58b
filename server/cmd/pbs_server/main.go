// Command pbs_server is the GoPBS batch server, compatible with TORQUE
// 2.5.13 clients.
//
// Usage:
//
//	pbs_server [-a true|false] [-A acctfile] [-d home] [-D] [-f] [-H hostname]
//	           [-L logfile] [-M [host:]momport] [-p port] [-R rmport]
//	           [-S [host:]schedport] [-t create|cold|warm|hot]
//	           [-http [host:]port] [-database url]
//
// -http (a GoPBS addition) serves the status page at / and Prometheus
// metrics at /metrics on the address given, 127.0.0.1 when only a port is
// given; it sets the http_address server attribute, which qmgr can change
// or unset later. Without either nothing listens.
//
// -database (a GoPBS addition) keeps the server's state in the PostgreSQL
// database at url instead of server_priv/serverdb.bolt; without the flag
// the first line of server_priv/database_url (mode 600) names one, if
// that file exists. Several servers may share one database: the one
// holding its failover lock serves, the others stand by and the first to
// get the lock takes over when the active one dies (docs/failover.md). A
// server that loses the lock exits with status 3.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"gopbs/internal/daemon"
	"gopbs/server"
)

const daemonEnv = "GOPBS_SERVER_DAEMONIZED"

func main() {
	os.Exit(run())
}

func splitHostPort(v string) (string, int, error) {
	host, port := "", v
	if i := strings.LastIndexByte(v, ':'); i >= 0 {
		host, port = v[:i], v[i+1:]
	}
	n, err := strconv.Atoi(port)
	if err != nil || n <= 0 || n > 65535 {
		return "", 0, fmt.Errorf("bad port %q", v)
	}
	return host, n, nil
}

func run() int {
	fs := flag.NewFlagSet("pbs_server", flag.ContinueOnError)
	home := fs.String("d", envOr("PBS_HOME", "/var/spool/torque"), "PBS home directory")
	port := fs.Int("p", 15001, "batch service port")
	mom := fs.String("M", "", "[host:]MOM port")
	rm := fs.Int("R", 0, "MOM resource-monitor port")
	sched := fs.String("S", "", "[host:]scheduler port")
	host := fs.String("H", "", "server host name")
	init := fs.String("t", "warm", "initialization type: create, cold, warm or hot")
	force := fs.Bool("f", false, "do not ask before -t create destroys the database")
	sch := fs.String("a", "", "true or false: override the scheduling attribute")
	fg := fs.Bool("D", false, "stay in the foreground")
	logFile := fs.String("L", "", "log file")
	acct := fs.String("A", "", "accounting file")
	httpAddr := fs.String("http", "", "[host:]port of the status page and metrics listener (host default 127.0.0.1)")
	dbFlag := fs.String("database", "", "PostgreSQL connection URL (default: server_priv/database_url, else the embedded store)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "pbs_server: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg := server.Config{
		Home: *home, Port: *port, RMPort: *rm, ServerName: *host, InitType: *init,
		Scheduling: *sch, LogFile: *logFile, AcctFile: *acct, HTTPAddr: *httpAddr,
	}
	if *mom != "" {
		_, p, err := splitHostPort(*mom)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pbs_server: -M: %v\n", err)
			return 2
		}
		cfg.MomPort = p
	}
	if *sched != "" {
		h, p, err := splitHostPort(*sched)
		if err != nil {
			fmt.Fprintf(os.Stderr, "pbs_server: -S: %v\n", err)
			return 2
		}
		cfg.SchedHost, cfg.SchedPort = h, p
	}
	dbURL, err := databaseURL(*dbFlag, *home)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pbs_server: %v\n", err)
		return 2
	}
	child := daemon.Child(daemonEnv)
	if *init == server.InitCreate && !*force && child == nil {
		if _, err := os.Stat(filepath.Join(*home, "server_priv", "serverdb.bolt")); err == nil || dbURL != "" {
			fmt.Print("pbs_server: -t create will remove all jobs and queues; do you wish to continue y/(n)? ")
			line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
			if !strings.HasPrefix(strings.TrimSpace(line), "y") {
				return 1
			}
		}
	}
	if !*fg && child == nil {
		// The background copy answers -t create's question with -f: it
		// has no terminal, and the user has already been asked here.
		err := daemon.Detach(daemon.Options{Env: daemonEnv, ExtraArgs: []string{"-f"}, WaitReady: true})
		if err != nil {
			// A failure the background copy reported already names
			// the program.
			msg := err.Error()
			if !strings.HasPrefix(msg, "pbs_server") {
				msg = "pbs_server: " + msg
			}
			fmt.Fprintln(os.Stderr, msg)
			return 1
		}
		return 0
	}
	var active *activeServer
	if dbURL != "" {
		// The lock holder is described by host (the servers of a pair
		// share their server name).
		name, _ := os.Hostname()
		if name == "" {
			name = cfg.ServerName
		}
		// A standby reports itself started to a waiting parent: it may
		// wait for ever.
		active, err = becomeActive(dbURL, *home, *logFile, fmt.Sprintf("%s pid %d", name, os.Getpid()),
			*init == server.InitCreate, func() { child.Ready(nil) })
		if err != nil {
			child.Ready(err)
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cfg.Store = active.store
		go active.exitOnLoss()
		defer active.release()
	}
	s, err := server.New(cfg)
	child.Ready(err)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		select {
		case <-sig:
			s.Shutdown("By Signal")
		case <-s.Done():
		}
	}()
	if err := s.Serve(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
