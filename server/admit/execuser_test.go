package server

import (
	"gopbs/server/state"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
)

func TestExecUserRules(t *testing.T) {
	j := &state.Job{}
	j.Attrs.Set(pbsattr.JobOwner, "alice@submit")
	for list, want := range map[string][2]string{ // on node1, host unknown
		"":                            {"alice", "alice"},
		"bob":                         {"bob", "bob"},
		"bob@node1,carol":             {"bob", "carol"},
		"carol,bob@node1.example.com": {"bob", "carol"},
		"bob@node2":                   {"alice", "alice"},
		"bob@NODE1":                   {"bob", "alice"},
	} {
		j.Attrs.Set(pbsattr.JobUserList, list)
		if got := [2]string{execUser(j, "node1"), execUser(j, "")}; got != want {
			t.Errorf("User_List %q: %v, want %v", list, got, want)
		}
	}
}

func TestMayRunAs(t *testing.T) {
	dir := t.TempDir()
	uid := os.Getuid()
	rhosts := func(name string) (string, int, error) {
		return filepath.Join(dir, name, ".rhosts"), uid, nil
	}
	write := func(name, text string, mode os.FileMode) {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		p := filepath.Join(dir, name, ".rhosts")
		os.WriteFile(p, []byte(text), mode)
		os.Chmod(p, mode)
	}
	write("bob", "# comment\nsubmit.example.com alice\nother carol\n", 0o600)
	write("dave", "submit alice\n", 0o666)
	for _, tc := range []struct {
		owner, host, luser string
		ok                 bool
	}{
		{"alice", "submit", "alice", true},
		{"alice", "submit", "bob", true},
		{"alice", "SUBMIT.example.com", "bob", true},
		{"alice", "elsewhere", "bob", false},
		{"carol", "submit", "bob", false},
		{"alice", "submit", "dave", false}, // writable by others
		{"alice", "submit", "erin", false}, // no .rhosts
		{"alice", "submit", "root", false},
	} {
		err := mayRunAs(rhosts, tc.owner, tc.host, tc.luser)
		if (err == nil) != tc.ok {
			t.Errorf("%s@%s as %s: %v, want ok %v", tc.owner, tc.host, tc.luser, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tc.luser) {
			t.Errorf("error %q does not name %s", err, tc.luser)
		}
	}
}

// TestACLRoots checks that a job that would run as root enters an
// execution queue only when acl_roots lists its owner (issue 20).
func TestACLRoots(t *testing.T) {
	cl := newCluster(t)
	setRoots := func(v string) {
		t.Helper()
		r := mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", attr("acl_roots", v))
		if v == "" {
			r = mgr(batchreq.MGR_CMD_UNSET, batchreq.MGR_OBJ_SERVER, "", attr("acl_roots", ""))
		}
		if p := cl.root.do(r); p.Code != 0 {
			t.Fatalf("acl_roots %q: %d %q", v, p.Code, p.Text)
		}
	}
	const refused = "Bad UID for job execution MSG=root user root not allowed"
	for _, tc := range []struct {
		roots string
		user  string
		attrs []batchreq.Attr
		ok    bool
	}{
		{"", "root", nil, false},
		{"", "alice", nil, true},
		{"root@elsewhere", "root", nil, false},
		{"root@vm", "root", nil, true},
		{"root@v*", "root", nil, true},
		{"root", "root", nil, true},
		{"", "root", []batchreq.Attr{attr("User_List", "root@vm")}, false},
	} {
		setRoots(tc.roots)
		p := submitAs(t, cl.root, tc.user, "", tc.attrs...)
		if tc.ok != (p.Code == 0) || !tc.ok && (p.Code != batchreq.PBSE_BADUSER || p.Text != refused) {
			t.Errorf("acl_roots %q, %s's job %v: %d %q", tc.roots, tc.user, tc.attrs, p.Code, p.Text)
		}
	}
	// qmove of a root job into an execution queue is checked too
	setRoots("root")
	id := mustSubmit(t, cl.root, "root")
	setRoots("")
	if p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_MoveJob, "root", &batchreq.MoveJob{JobID: id, Destination: "short"})); p.Code != batchreq.PBSE_BADUSER {
		t.Errorf("qmove of root's job without acl_roots: %d %q", p.Code, p.Text)
	}
}
