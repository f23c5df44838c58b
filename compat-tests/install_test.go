package compattests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/internal/e2e"
)

// TestMakeInstall runs `make install` into a staging root and checks what
// it installs: pbs_iff owned by root and setuid, the daemons in sbin, the
// client commands in bin and the PBS_HOME directories. An unprivileged
// user's qstat and qmgr from the installed bin then reach the installed
// pbs_server, authenticated through the installed pbs_iff.
func TestMakeInstall(t *testing.T) {
	e2e.RequireRoot(t, "make install sets pbs_iff setuid root")
	if testing.Short() {
		t.Skip("builds every binary (-short)")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root, err := e2e.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := e2e.Dir(t)
	stage := filepath.Join(dir, "root")
	const prefix, pbsHome = "/usr/local", "/var/spool/torque"
	cmd := exec.Command("make", "-C", root, "install", "BIN="+filepath.Join(dir, "build"), "DESTDIR="+stage,
		"PREFIX="+prefix, "PBS_HOME="+pbsHome, "UNITDIR=/etc/systemd/system")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	sbin, bin := filepath.Join(stage, prefix, "sbin"), filepath.Join(stage, prefix, "bin")
	// Everything on the way to the binaries must be searchable by the user.
	for d := stage; len(d) > len(dir); d = filepath.Dir(d) {
		_ = os.Chmod(d, 0o755)
	}

	fi, err := os.Stat(filepath.Join(sbin, "pbs_iff"))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode()&os.ModeSetuid == 0 || fi.Mode().Perm() != 0o755 || st.Uid != 0 {
		t.Errorf("installed pbs_iff: mode %v uid %d, want setuid root 4755", fi.Mode(), st.Uid)
	}
	for _, p := range []string{
		filepath.Join(sbin, "pbs_server"), filepath.Join(sbin, "pbs_mom"), filepath.Join(sbin, "pbs_sched"),
		filepath.Join(sbin, "momctl"), filepath.Join(bin, "qsub"), filepath.Join(bin, "qstat"), filepath.Join(bin, "qmgr"),
		filepath.Join(bin, "pbsnodes"), filepath.Join(stage, pbsHome, "server_priv", "accounting"),
		filepath.Join(stage, pbsHome, "sched_priv", "sched_config"), filepath.Join(stage, "/etc/systemd/system", "pbs_server.service"),
	} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}
	for _, d := range []string{"spool", "undelivered"} {
		if fi, err := os.Stat(filepath.Join(stage, pbsHome, d)); err != nil || fi.Mode().Perm() != 0o777 || fi.Mode()&os.ModeSticky == 0 {
			t.Errorf("PBS_HOME/%s: %v %v, want mode 1777", d, fi.Mode(), err)
		}
	}
	if t.Failed() {
		return
	}

	// The installed server, and the installed clients run by a user.
	home := filepath.Join(dir, "home")
	if err := e2e.MakeHome(home, "localhost"); err != nil {
		t.Fatal(err)
	}
	port := e2e.FreePort(t)
	srv := e2e.Start(t, "pbs_server", exec.Command(filepath.Join(sbin, "pbs_server"), "-D", "-f", "-t", "create", "-d", home,
		"-p", strconv.Itoa(port), "-H", "localhost"))
	srv.WaitListening(t, "127.0.0.1:"+strconv.Itoa(port), 10*time.Second)
	u := e2e.User(t, e2eClientUser)
	run := func(name string, args ...string) (string, string, int) {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		u.AsUser(cmd, dir)
		// The binaries were built for /usr/local/sbin; PBSBINDIR points
		// them at the staged one, as TORQUE's clients honour it.
		cmd.Env = append(cmd.Env, "PBS_DEFAULT=localhost:"+strconv.Itoa(port), "PBSBINDIR="+sbin)
		return e2e.Run(t, cmd, 30*time.Second)
	}
	out, errOut, code := run("qstat", "-B")
	if code != 0 || !strings.Contains(out, "localhost") {
		t.Fatalf("qstat -B as %s through the installed pbs_iff: exit %d\nstdout: %s\nstderr: %s\nserver: %s", e2eClientUser, code, out, errOut, srv.Output())
	}
	// A manager request by the user is refused by the server, which knows
	// who asks only through pbs_iff's AuthenticateUser.
	if _, errOut, _ := run("qmgr", "-c", "set server scheduling=true"); !strings.Contains(errOut, "Unauthorized Request") {
		t.Errorf("qmgr set by %s: stderr %q; want an Unauthorized Request refusal", e2eClientUser, errOut)
	}
}
