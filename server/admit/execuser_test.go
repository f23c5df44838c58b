package admit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
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
		if got := [2]string{ExecUser(j, "node1"), ExecUser(j, "")}; got != want {
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
