package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// HostsFile writes an /etc/hosts for a namespace in which host (and
// localhost) is 127.0.0.1, and returns its path (in a temporary
// directory of the test).
func HostsFile(t testing.TB, host string) string {
	t.Helper()
	hosts := filepath.Join(t.TempDir(), "hosts")
	content := fmt.Sprintf("127.0.0.1\t%s localhost\n::1\tlocalhost ip6-localhost ip6-loopback\n", host)
	if err := os.WriteFile(hosts, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return hosts
}

// RequireNamespaces skips the test unless it runs as root and unshare(1)
// can create UTS and mount namespaces here.
func RequireNamespaces(t testing.TB) {
	t.Helper()
	RequireRoot(t, "programs under test run in UTS and mount namespaces of their own")
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare(1) not installed")
	}
	if out, err := exec.Command("unshare", "--uts", "--mount", "--propagation", "private", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot create UTS and mount namespaces here: %v %s", err, out)
	}
}

// HostCommand returns a command that runs name with args inside a new
// UTS and mount namespace whose host name is host and whose /etc/hosts
// (HostsFile) maps host and localhost to 127.0.0.1; the machine's own
// host name plays no part. It skips the test unless RequireNamespaces
// passes.
func HostCommand(t testing.TB, host string, name string, args ...string) *exec.Cmd {
	t.Helper()
	RequireNamespaces(t)
	script := `hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"`
	full := append([]string{"--uts", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
		host, HostsFile(t, host), name}, args...)
	return exec.Command("unshare", full...)
}

// HostsCommand returns a command that runs name with args in a mount
// namespace of its own whose /etc/hosts is the file hosts (the host name
// stays the machine's): daemons there resolve the test's node names to
// the loopback addresses the file gives them. env is added to the
// test's environment. The caller checks RequireNamespaces first.
func HostsCommand(hosts string, env []string, name string, args ...string) *exec.Cmd {
	script := `mount --bind "$1" /etc/hosts && shift && exec "$@"`
	full := append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "sh", hosts, name}, args...)
	cmd := exec.Command("unshare", full...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}
