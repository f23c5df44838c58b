// Package momtest holds the helpers the MOM packages' tests share: a
// log buffer safe for concurrent writers and the throwaway job user.
package momtest

import (
	"os"
	"os/user"
	"strings"
	"sync"
	"testing"

	"gopbs/internal/e2e"
)

// SyncBuffer is a strings.Builder safe for concurrent use, for logs that
// daemon goroutines write while a test reads them.
type SyncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// RequireRoot skips the test unless it runs as root (privileged ports,
// setuid job execution).
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: privileged ports and setuid job execution")
	}
}

// RequireUser skips the test unless it runs as root and returns the
// account name, creating it (no home directory, login shell /bin/bash)
// when absent; it skips when that fails.
func RequireUser(t testing.TB, name string) *user.User {
	t.Helper()
	RequireRoot(t)
	a := e2e.UserWithShell(t, name, "/bin/bash")
	u, err := user.Lookup(a.Name)
	if err != nil {
		t.Skipf("test user %s: %v", name, err)
	}
	return u
}
