package daemon

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/sched/config"
	"gopbs/sched/svrconn"
)

// helloServer answers a named scheduler's SchedHello with its object's
// attributes and records the Manager requests that set them.
type helloServer struct {
	mu    sync.Mutex
	attrs batchreq.AttrList
	sets  []string // "name attr=value ..." of each Manager SET
}

// serve answers requests on c until it closes.
func (s *helloServer) serve(c net.Conn) {
	defer c.Close()
	r := dis.NewReader(c)
	for {
		req, err := batchreq.ReadAnyRequest(r)
		if err != nil {
			return
		}
		s.mu.Lock()
		rp := batchreq.NullReply()
		switch body := req.Body.(type) {
		case *batchreq.StatusReq:
			if req.Header.Type == batchreq.PBS_BATCH_SchedHello {
				rp = &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: []batchreq.StatusObject{
					{ObjType: batchreq.MGR_OBJ_SCHED, Name: body.ID, Attrs: s.attrs}}}
			}
		case *batchreq.Manage:
			set := body.ObjName
			for _, a := range body.Attrs {
				set += " " + a.Name + "=" + a.Value
			}
			s.sets = append(s.sets, set)
		}
		s.mu.Unlock()
		if _, err := c.Write(rp.Append(nil)); err != nil {
			return
		}
	}
}

// privDir makes a sched_priv under base holding sched_config.
func privDir(t *testing.T, base, name string) string {
	t.Helper()
	dir := filepath.Join(base, name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sched_config"), []byte(config.Shipped), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// privChangeDaemon returns a scheduler s1 in base whose sched_priv is
// sched_priv_s1, its log in a buffer, and hello, which runs its hello
// (with the lock held, as a cycle does) against a stand-in server giving
// priv as s1's sched_priv.
func privChangeDaemon(t *testing.T, base string) (d *Daemon, log *bytes.Buffer, srv *helloServer, hello func(priv string) (bool, error)) {
	t.Helper()
	oldPriv := privDir(t, base, "sched_priv_s1")
	if err := os.MkdirAll(filepath.Join(base, "sched_logs_s1"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "clients"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Home: base, PrivDir: oldPriv, LogDir: filepath.Join(base, "sched_logs_s1"),
		Name: "s1", ConfigFile: filepath.Join(base, "clients")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	log = &bytes.Buffer{}
	d.Log = newBufLogger(log, time.Now())
	srv = &helloServer{}
	hello = func(priv string) (bool, error) {
		t.Helper()
		srv.mu.Lock()
		srv.attrs = batchreq.AttrList{batchreq.NewAttr("partitions", "p1"), batchreq.NewAttr("sched_priv", priv),
			batchreq.NewAttr("sched_log", filepath.Join(base, "sched_logs_s1"))}
		srv.mu.Unlock()
		a, b := net.Pipe()
		defer a.Close()
		go srv.serve(b)
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.hello(svrconn.New(a))
	}
	return d, log, srv, hello
}

// TestPrivChangeMovesAccounting: a named scheduler whose sched_priv is
// changed while it runs (seed 003, interface 2) opens its accounting
// file in the new sched_priv, as it reads its policy files there, and
// closes the old one; the log says both. A sched_priv it cannot take on
// (no sched_config, or an accounting directory that cannot be made)
// leaves the policy directory and the accounting file where they were,
// creates nothing in the refused directory, and sets the object's
// comment and scheduling off.
func TestPrivChangeMovesAccounting(t *testing.T) {
	base := t.TempDir()
	d, logBuf, srv, hello := privChangeDaemon(t, base)
	oldPriv := filepath.Join(base, "sched_priv_s1")
	day := d.Now().Format("20060102")
	oldAcct := d.acct
	if want := filepath.Join(oldPriv, "accounting", day); oldAcct == nil || oldAcct.Name() != want {
		t.Fatalf("accounting file at the start %v, want %s", oldAcct, want)
	}

	// Taken on: the accounting file is the new sched_priv's.
	newPriv := privDir(t, base, "sched_priv_s1_new")
	if skip, err := hello(newPriv); skip || err != nil {
		t.Fatalf("hello with a new sched_priv: skip %v, err %v", skip, err)
	}
	newName := filepath.Join(newPriv, "accounting", day)
	if d.acct == nil || d.acct.Name() != newName {
		t.Fatalf("accounting file %v after the change, want %s", d.acct, newName)
	}
	if _, err := os.Stat(newName); err != nil {
		t.Errorf("new accounting file: %v", err)
	}
	if _, err := oldAcct.Write([]byte("x")); err == nil {
		t.Errorf("the old accounting file %s is still open", oldAcct.Name())
	}
	if got := d.PrivPath("sched_config"); got != filepath.Join(newPriv, "sched_config") {
		t.Errorf("policy files read from %s", got)
	}
	for _, want := range []string{"Account file " + newName + " opened", msgPrivChanged + newPriv} {
		if !strings.Contains(logBuf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logBuf.String())
		}
	}
	if len(srv.sets) != 0 {
		t.Errorf("the server was asked %q on a change taken on", srv.sets)
	}

	// Refused: the accounting file stays the one just opened.
	noConfig := filepath.Join(base, "sched_priv_empty")
	if err := os.MkdirAll(noConfig, 0o750); err != nil {
		t.Fatal(err)
	}
	badAcct := privDir(t, base, "sched_priv_badacct")
	if err := os.WriteFile(filepath.Join(badAcct, "accounting"), nil, 0o644); err != nil { // not a directory
		t.Fatal(err)
	}
	for _, dir := range []string{noConfig, badAcct} {
		srv.sets = nil
		if skip, _ := hello(dir); !skip {
			t.Errorf("%s: taken on", dir)
		}
		if d.acct == nil || d.acct.Name() != newName {
			t.Errorf("%s: accounting file %v, want %s kept", dir, d.acct, newName)
		}
		if _, err := d.acct.Write(nil); err != nil {
			t.Errorf("%s: the kept accounting file is closed: %v", dir, err)
		}
		if got := d.PrivPath("sched_config"); got != filepath.Join(newPriv, "sched_config") {
			t.Errorf("%s: policy files read from %s", dir, got)
		}
		if want := "s1 comment=" + commentPrivFail + " scheduling=false"; len(srv.sets) != 1 || srv.sets[0] != want {
			t.Errorf("%s: server asked %q, want %q", dir, srv.sets, want)
		}
	}
	if _, err := os.Stat(filepath.Join(noConfig, "accounting")); !os.IsNotExist(err) {
		t.Errorf("accounting made in the refused %s: %v", noConfig, err)
	}
}

// TestPrivChangeMovesLock checks that the lock file (sched.lock, with
// the pid) follows a sched_priv taken on at run time, and stays where it
// is when the new directory is refused, another scheduler's lock
// included.
func TestPrivChangeMovesLock(t *testing.T) {
	base := t.TempDir()
	d, _, srv, hello := privChangeDaemon(t, base)
	if err := d.Lock(); err != nil {
		t.Fatal(err)
	}
	oldLock := filepath.Join(base, "sched_priv_s1", "sched.lock")
	pid := strconv.Itoa(os.Getpid()) + "\n"
	holdsPID := func(path string) bool {
		b, err := os.ReadFile(path)
		return err == nil && string(b) == pid
	}
	if !holdsPID(oldLock) {
		t.Fatalf("%s does not hold the pid", oldLock)
	}

	newPriv := privDir(t, base, "sched_priv_s1_new")
	if skip, err := hello(newPriv); skip || err != nil {
		t.Fatalf("hello with a new sched_priv: skip %v, err %v", skip, err)
	}
	newLock := filepath.Join(newPriv, "sched.lock")
	if !holdsPID(newLock) {
		t.Errorf("%s does not hold the pid after the change", newLock)
	}
	if _, err := os.Stat(oldLock); !os.IsNotExist(err) {
		t.Errorf("the old lock file is still there: %v", err)
	}
	if _, err := takeLock(newPriv); err == nil {
		t.Errorf("the new lock file is not locked")
	}

	// Refused: a directory another scheduler has locked, and one whose
	// accounting directory cannot be made (the lock taken there is
	// given back).
	locked := privDir(t, base, "sched_priv_s2")
	other, err := takeLock(locked)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	badAcct := privDir(t, base, "sched_priv_badacct")
	if err := os.WriteFile(filepath.Join(badAcct, "accounting"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{locked, badAcct} {
		srv.sets = nil
		if skip, _ := hello(dir); !skip {
			t.Errorf("%s: taken on", dir)
		}
		if !holdsPID(newLock) {
			t.Errorf("%s: the lock file %s was not kept", dir, newLock)
		}
		if want := "s1 comment=" + commentPrivFail + " scheduling=false"; len(srv.sets) != 1 || srv.sets[0] != want {
			t.Errorf("%s: server asked %q, want %q", dir, srv.sets, want)
		}
	}
	if _, err := os.Stat(filepath.Join(badAcct, "sched.lock")); !os.IsNotExist(err) {
		t.Errorf("a lock file left in the refused %s: %v", badAcct, err)
	}
}
