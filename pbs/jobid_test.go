package pbs

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopbs/batchreq"
)

func TestParseJobID(t *testing.T) {
	t.Setenv("PBS_DEFAULT", "srv:15001")
	tests := []struct {
		in                        string
		ok                        bool
		qualified, server, locate string
	}{
		{"9999.vm", true, "9999.vm", "vm", "9999.vm@vm"},
		{"5[].vm", true, "5[].vm", "vm", "5[].vm@vm"},
		{"12", true, "12.srv", "", "12.srv"},
		{"12.VM", true, "12.vm", "VM", "12.vm@VM"},
		{"12.vm@other:15005", true, "12.vm", "other:15005", "12.vm@vm"},
		{"12@other", true, "12.srv", "other", "12.srv"},
		{"12.srv", true, "12.srv", "srv:15001", "12.srv@srv"},
		{"123456789012345.vm", true, "123456789012345.vm", "vm", "123456789012345.vm@vm"},
		{"1234567890123456.vm", false, "", "", ""},
		{"5[1-3].vm", false, "", "", ""},
		{"{J3}", false, "", "", ""},
		{"abc", false, "", "", ""},
		{"12.", false, "", "", ""},
		{"12@", false, "", "", ""},
		{"", false, "", "", ""},
	}
	for _, tt := range tests {
		j, err := ParseJobID(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("%q: err %v", tt.in, err)
			continue
		}
		if !tt.ok {
			continue
		}
		if j.Qualified() != tt.qualified || j.Server() != tt.server || j.LocateID() != tt.locate {
			t.Errorf("%q: qualified %q server %q locate %q", tt.in, j.Qualified(), j.Server(), j.LocateID())
		}
	}
}

func TestServerList(t *testing.T) {
	t.Setenv("PBS_DEFAULT", "")
	t.Setenv("PBS_SERVER", "a:15011,b")
	if DefaultServer() != "a:15011" || FallbackServer() != "b" {
		t.Errorf("default %q fallback %q", DefaultServer(), FallbackServer())
	}
	if h, p := SplitServer("a:15011"); h != "a" || p != 15011 {
		t.Errorf("split: %s %d", h, p)
	}
	t.Setenv("PBS_BATCH_SERVICE_PORT", "")
	if h, p := SplitServer("b"); h != "b" || p != 15001 {
		t.Errorf("split: %s %d", h, p)
	}
}

// TestParentInServerList: with a list of several default servers (a
// failover pair), a job id naming one of their hosts goes to the list
// (Server ""), tried in turn; other parents, parents with a port and
// single-server lists are unchanged.
func TestParentInServerList(t *testing.T) {
	t.Setenv("PBS_SERVER", "")
	for _, tt := range []struct{ list, id, server string }{
		{"head1:15011,head2:15011", "12.head1", ""},
		{"head1:15011,head2:15011", "12.HEAD2", ""},
		{"head1:15011,head2:15011", "12.other", "other"},
		{"head1:15011,head2:15011", "12.head1:15001", "head1:15001"},
		{"head1:15011,head2:15011", "12.head1@head2", "head2"},
		{"head1:15011", "12.head1", "head1:15011"},
		{"head1", "12.head1", "head1"},
	} {
		t.Setenv("PBS_DEFAULT", tt.list)
		j, err := ParseJobID(tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := j.Server(); got != tt.server {
			t.Errorf("PBS_DEFAULT=%s, %s: server %q, want %q", tt.list, tt.id, got, tt.server)
		}
	}
}

func TestErrorText(t *testing.T) {
	for code, want := range map[int]string{0: "no error", 15001: "Unknown Job Id",
		15007: "Unauthorized Request ", 15033: "Batch protocol error", 15019: "", 111: "Connection refused"} {
		if got := ErrorText(code); got != want {
			t.Errorf("ErrorText(%d) = %q, want %q", code, got, want)
		}
	}
}

func TestUnresolvableServer(t *testing.T) {
	c, err := Dial("bad..host", Options{User: "alice", NoAuth: true})
	if err != nil {
		t.Fatalf("Dial: %v (TORQUE hands back a handle)", err)
	}
	defer c.Close()
	if _, err := c.StatusServer(nil, ""); Errno(err) != batchreq.PBSE_PROTOCOL || ServerText(err) != "" {
		t.Fatalf("StatusServer: %v", err)
	}
}

// TestResolveJobID covers the normalisation of spec 05 §1.1: the server
// part becomes the full, lower-cased name of the parent (or default)
// server, a written port is kept, a parent written with "@current" is sent
// verbatim, and an unresolvable name makes the operand illegal. The names
// resolve through a HOSTALIASES file (an alias is its own full name) and
// IP literals, so the machine's own names play no part except through the
// reverse lookup of 127.0.0.1, which the test reads first.
func TestResolveJobID(t *testing.T) {
	aliases := filepath.Join(t.TempDir(), "aliases")
	if err := os.WriteFile(aliases, []byte("srv 127.0.0.1\nother 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOSTALIASES", aliases)
	t.Setenv("PBS_DEFAULT", "SRV:15011")
	loopback := "127.0.0.1"
	if names, err := net.LookupAddr(loopback); err == nil && len(names) > 0 {
		loopback = strings.ToLower(strings.TrimSuffix(names[0], "."))
	}
	tests := []struct {
		in, qualified string
		ok            bool
	}{
		{"12", "12.srv", true},
		{"12.srv", "12.srv", true},
		{"12.SRV:15005", "12.srv:15005", true},
		{"12.127.0.0.1", "12." + loopback, true},
		{"12@other", "12.srv", true},
		{"12.Srv@other", "12.Srv", true},
		{"12.bad..host", "", false},
		{"x.srv", "", false},
	}
	for _, tt := range tests {
		j, err := ResolveJobID(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("%q: err %v", tt.in, err)
			continue
		}
		if !tt.ok {
			if !errors.Is(err, ErrBadJobID) {
				t.Errorf("%q: error %v is not ErrBadJobID", tt.in, err)
			}
			continue
		}
		if got := j.Qualified(); got != tt.qualified {
			t.Errorf("%q: qualified %q, want %q", tt.in, got, tt.qualified)
		}
	}
	t.Setenv("PBS_DEFAULT", "")
	t.Setenv("PBS_SERVER", "")
	t.Setenv("PBS_HOME", t.TempDir())
	if j, err := ResolveJobID("12"); err != nil || j.Qualified() != "12" {
		t.Errorf("no default server: %q, %v", j.Qualified(), err)
	}
}
