// Package pgtest starts throwaway PostgreSQL servers for tests: Debian's
// initdb and pg_ctl (package postgresql) in a temporary directory, run as
// an unprivileged user the test creates (PostgreSQL refuses to run as
// root), listening on a free loopback port with trust authentication and
// fsync on. A test that cannot have one is skipped with the reason.
package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopbs/internal/e2e"
)

// Server is a running PostgreSQL server.
type Server struct {
	// URL connects to its postgres database as the superuser postgres.
	URL string
	// Port is its TCP port on 127.0.0.1.
	Port int

	t    testing.TB
	bin  string // directory of initdb, pg_ctl, postgres
	data string
	log  string
	user string // account running it, "" for the test's own
}

// pgUser is the account the servers run as when the test runs as root.
const pgUser = "gopbspg"

// binDir returns the directory holding initdb and pg_ctl: PATH first,
// then Debian's /usr/lib/postgresql/<version>/bin (newest version).
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if q, err := filepath.EvalSymlinks(p); err == nil {
			p = q
		}
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(a, b int) bool {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[a])))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[b])))
		return va > vb
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("initdb not found in PATH nor /usr/lib/postgresql/*/bin (apt-get install postgresql)")
}

// Start initialises and starts a server for the test; it is stopped when
// the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		t.Skipf("PostgreSQL is not installed: %v", err)
	}
	dir := e2e.Dir(t)
	s := &Server{t: t, bin: bin, data: filepath.Join(dir, "data"), log: filepath.Join(dir, "postgres.log")}
	if os.Geteuid() == 0 {
		acct := e2e.User(t, pgUser)
		s.user = acct.Name
		if err := os.Chown(dir, acct.UID, acct.GID); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := s.command("initdb", "-D", s.data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s.Port = e2e.FreePorts(t, 1)[0]
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port)
	t.Cleanup(s.Stop)
	s.Restart()
	return s
}

// command returns a command running one of PostgreSQL's programs as the
// server's account.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	if s.user == "" {
		return exec.Command(path, args...)
	}
	return exec.Command("runuser", append([]string{"-u", s.user, "--", path}, args...)...)
}

// Restart starts the server (again, after Stop or Kill) on the same data
// and port, and waits until it accepts connections.
func (s *Server) Restart() {
	s.t.Helper()
	opts := strings.Join([]string{"-p", strconv.Itoa(s.Port), "-k", filepath.Dir(s.data),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=on"}, " ")
	if out, err := s.command("pg_ctl", "-D", s.data, "-l", s.log, "-o", opts, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(s.log)
		s.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// Stop stops the server at once (immediate shutdown: what is committed is
// in its WAL and is recovered by the next start). Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	if _, err := os.Stat(filepath.Join(s.data, "postmaster.pid")); err != nil {
		return
	}
	s.command("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop").Run()
}
