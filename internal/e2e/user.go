package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Account is a local user account.
type Account struct {
	// Name is the login name.
	Name string
	// UID and GID are the user and primary group ids.
	UID, GID int
	// HomeDir is the account's home directory as the password database
	// has it; it need not exist (see MakeHome).
	HomeDir string
}

// DefaultShell is the login shell User gives the accounts it creates.
const DefaultShell = "/bin/sh"

// User returns the account called name, creating it with useradd (no
// home directory, login shell DefaultShell) when absent. It skips the
// test unless it runs as root, or when the account cannot be had.
func User(t testing.TB, name string) *Account {
	t.Helper()
	return UserWithShell(t, name, DefaultShell)
}

// UserWithShell is User with the login shell of a created account given
// (pbs_mom runs jobs with the owner's login shell). An existing account
// is taken as it is.
func UserWithShell(t testing.TB, name, shell string) *Account {
	t.Helper()
	RequireRoot(t, "test user accounts")
	if _, err := os.Stat(shell); err != nil {
		t.Skipf("login shell %s of test user %s: %v", shell, name, err)
	}
	a, err := LookupOrAdd(name, shell)
	if err != nil {
		t.Skipf("cannot create test user %s: %v", name, err)
	}
	return a
}

// LookupOrAdd returns the account called name, creating it with useradd
// (no home directory, the login shell given) when absent. useradd is
// tried again while another process holds the password database, and an
// account another process created meanwhile is taken.
func LookupOrAdd(name, shell string) (*Account, error) {
	if a, err := lookup(name); err == nil {
		return a, nil
	}
	var lastErr error
	for range 20 {
		out, err := exec.Command("useradd", "-M", "-s", shell, name).CombinedOutput()
		if a, lerr := lookup(name); lerr == nil {
			return a, nil
		}
		if err == nil {
			return nil, fmt.Errorf("useradd %s succeeded but the account is not found", name)
		}
		lastErr = fmt.Errorf("useradd %s: %w: %s", name, err, out)
		// exit status 1 or 10: the password or group file could not be
		// updated (another process holds its lock)
		if ee, ok := err.(*exec.ExitError); !ok || (ee.ExitCode() != 1 && ee.ExitCode() != 10) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, lastErr
}

func lookup(name string) (*Account, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err)
	}
	return &Account{Name: u.Username, UID: uid, GID: gid, HomeDir: u.HomeDir}, nil
}

// Credential returns the credential that makes a command run as a
// (exec.Cmd.SysProcAttr.Credential).
func (a *Account) Credential() *syscall.Credential {
	return &syscall.Credential{Uid: uint32(a.UID), Gid: uint32(a.GID)}
}

// Env returns the HOME, LOGNAME and USER variables of a, with home as
// HOME ("" for the account's HomeDir).
func (a *Account) Env(home string) []string {
	if home == "" {
		home = a.HomeDir
	}
	return []string{"HOME=" + home, "LOGNAME=" + a.Name, "USER=" + a.Name}
}

// AsUser sets cmd up to run as a: a's credential, and the variables of
// Env(home) appended to cmd.Env. The caller gives cmd.Env the rest of the
// environment first: appended to a nil Env, these three are all of it.
func (a *Account) AsUser(cmd *exec.Cmd, home string) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = a.Credential()
	cmd.Env = append(cmd.Env, a.Env(home)...)
}

// MakeHome creates a's home directory (owned by a) when it does not
// exist; it skips the test when the directory cannot be made.
func (a *Account) MakeHome(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(a.HomeDir); err == nil {
		return
	}
	if err := os.MkdirAll(a.HomeDir, 0o755); err != nil {
		t.Skipf("cannot create the home of %s: %v", a.Name, err)
	}
	if err := os.Chown(a.HomeDir, a.UID, a.GID); err != nil {
		t.Fatalf("home of %s: %v", a.Name, err)
	}
}
