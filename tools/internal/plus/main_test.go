package plus

import (
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/internal/e2e"
)

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// TestBinaries runs the built plus_reserve and plus_commit as a user
// would: they find the server through PBS_DEFAULT, have pbs_iff (a
// stand-in that vouches for every connection) authenticate the
// connection, send the login name in the request header, print and exit
// as the in-process tests say.
func TestBinaries(t *testing.T) {
	bins := e2e.Build(t, "plus_reserve", "plus_commit")
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		t.Skipf("no login name for uid %d: %v", os.Getuid(), err)
	}
	iffDir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(iffDir, "pbs_iff"), []byte("#!/bin/sh\nprintf '\\000\\000\\000\\000'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFakeServer(t, []*batchreq.Reply{idReply("R21"),
		text(batchreq.PBSE_PERM, "Unauthorized Request  MSG=R21 belongs to bob")})
	port := strconv.Itoa(f.ln.Addr().(*net.TCPAddr).Port)
	env := []string{"PATH=/usr/bin:/bin", "PBS_HOME=" + home, "PBS_DEFAULT=127.0.0.1:" + port, "PBSBINDIR=" + iffDir}
	run := func(name string, args ...string) (string, string, int) {
		cmd := exec.Command(bins.Path(name), args...)
		cmd.Env = env
		return e2e.Run(t, cmd, 30*time.Second)
	}
	out, errOut, code := run("plus_reserve", "-s", "+1h", "-D", "30m", "-n", "2")
	if out != "R21\n" || errOut != "" || code != 0 {
		t.Errorf("plus_reserve: %q %q exit %d", out, errOut, code)
	}
	out, errOut, code = run("plus_commit", "-r", "R21")
	if out != "" || errOut != "plus_commit: R21: Unauthorized Request  MSG=R21 belongs to bob\n" || code != 1 {
		t.Errorf("plus_commit: %q %q exit %d", out, errOut, code)
	}
	sent := f.requests()
	if len(sent) != 2 || !strings.HasPrefix(sent[0], u.Username+" ResvSubmit flags=0 resv_start=") ||
		!strings.HasSuffix(sent[0], " resv_nodect=2") || sent[1] != u.Username+" ResvCommit id=R21 owner= flags=0" {
		t.Errorf("sent %q", sent)
	}
}
