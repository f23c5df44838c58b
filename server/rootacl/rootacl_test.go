package rootacl

import (
	"errors"
	"testing"
)

func fakeUIDs(m map[string]int) UIDFunc {
	return func(name string) (int, bool) {
		id, ok := m[name]
		return id, ok
	}
}

func TestCheck(t *testing.T) {
	uids := fakeUIDs(map[string]int{"root": 0, "toor": 0, "alice": 1000})
	cases := []struct {
		name   string
		acl    []string
		owner  string
		users  []string
		refuse bool
	}{
		{"plain user", nil, "alice@vm", []string{"alice"}, false},
		{"root without acl_roots", nil, "root@vm", []string{"root"}, true},
		{"root listed without host", []string{"root"}, "root@vm", []string{"root"}, false},
		{"root listed with its host", []string{"root@vm"}, "root@vm", []string{"root"}, false},
		{"root listed for another host", []string{"root@other"}, "root@vm", []string{"root"}, true},
		{"root listed with a wildcard", []string{"root@*.example.com"}, "root@n1.example.com", []string{"root"}, false},
		{"wildcard does not match", []string{"root@*.example.com"}, "root@n1.example.org", []string{"root"}, true},
		{"another uid 0 account", nil, "toor@vm", []string{"toor"}, true},
		{"uid 0 account listed", []string{"toor@vm"}, "toor@vm", []string{"toor"}, false},
		{"root runs as alice", nil, "root@vm", []string{"alice"}, false},
		{"alice may run as root on one host", nil, "alice@vm", []string{"alice", "root"}, true},
		{"listing root does not allow alice", []string{"root"}, "alice@vm", []string{"root"}, true},
		{"any user entry", []string{"*"}, "alice@vm", []string{"root"}, false},
	}
	for _, c := range cases {
		err := Check(c.acl, c.owner, c.users, uids)
		if (err != nil) != c.refuse {
			t.Errorf("%s: Check(%q, %q, %q) = %v, want refused %v", c.name, c.acl, c.owner, c.users, err, c.refuse)
		}
		var r *Refusal
		if err != nil && !errors.As(err, &r) {
			t.Errorf("%s: error %T is no *Refusal", c.name, err)
		}
	}
}

func TestRefusalText(t *testing.T) {
	err := Check(nil, "root@vm", []string{"root"}, nil)
	if err == nil || err.Error() != "root user root not allowed" {
		t.Fatalf("refusal %v", err)
	}
}

func TestIsSuperuser(t *testing.T) {
	if !IsSuperuser("root", nil) {
		t.Error("root is no superuser without a user database")
	}
	if IsSuperuser("nosuchuser", fakeUIDs(nil)) {
		t.Error("an unknown user is a superuser")
	}
	if IsSuperuser("daemon", fakeUIDs(map[string]int{"daemon": 1})) {
		t.Error("uid 1 is a superuser")
	}
	if id, ok := SystemUID("root"); ok && id != 0 {
		t.Errorf("SystemUID(root) = %d", id)
	}
}
