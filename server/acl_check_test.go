package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopbs/batchreq"
)

func TestManagerListChecks(t *testing.T) {
	cl := newCluster(t)
	incr := func(a batchreq.Attr) batchreq.Attr { a.Op = batchreq.INCR; return a }
	setSvr := func(a batchreq.Attr) *batchreq.Request {
		return mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", a)
	}
	setQue := func(a batchreq.Attr) *batchreq.Request {
		return mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, "batch", a)
	}
	for _, tc := range []struct {
		name string
		req  *batchreq.Request
		code int
		text string // the reply text, when it is checked
	}{
		{"manager host not a host", setSvr(attr("managers", "root@vm,bob@bad host")), batchreq.PBSE_BADACLHOST, "Bad ACL entry in host list MSG=First bad host: bad host"},
		{"manager without host", setSvr(attr("operators", "root")), batchreq.PBSE_BADACLHOST, "Bad ACL entry in host list MSG=First bad host: "},
		{"manager with empty user", setSvr(attr("managers", "@vm")), batchreq.PBSE_BADACLHOST, "Bad ACL entry in host list MSG=First bad host: vm"},
		{"manager wildcard host", setSvr(attr("managers", "root@vm,alice@*.example.org")), 0, ""},
		{"server acl_hosts bad", setSvr(attr("acl_hosts", "vm,no/slash")), batchreq.PBSE_BADACLHOST, "Bad ACL entry in host list MSG=First bad host: no/slash"},
		{"queue acl_hosts bad", setQue(attr("acl_hosts", "a..b")), batchreq.PBSE_BADACLHOST, "Bad ACL entry in host list MSG=First bad host: a..b"},
		{"queue acl_hosts good", setQue(attr("acl_hosts", "vm,*.example.org")), 0, ""},
		{"duplicate in value", setSvr(attr("acl_users", "alice,bob,alice")), batchreq.PBSE_DUPLIST, ""},
		{"duplicate host differing in case", setQue(attr("acl_hosts", "vm,VM")), batchreq.PBSE_DUPLIST, ""},
		{"increment with present entry", setSvr(incr(attr("managers", "root@vm"))), batchreq.PBSE_DUPLIST, ""},
		{"increment with new entry", setSvr(incr(attr("managers", "bob@vm"))), 0, ""},
		{"disallowed_types bad word", setQue(attr("disallowed_types", "interactive,serial")), batchreq.PBSE_BADDISALLOWTYPE, ""},
		{"disallowed_types good", setQue(attr("disallowed_types", "interactive,job_array")), 0, ""},
		{"disallowed_types duplicate", setQue(incr(attr("disallowed_types", "job_array"))), batchreq.PBSE_DUPLIST, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := cl.root.do(tc.req)
			if p.Code != tc.code || tc.text != "" && p.Text != tc.text {
				t.Fatalf("reply %d %q, want %d %q", p.Code, p.Text, tc.code, tc.text)
			}
		})
	}
	// refused sets changed nothing
	p := cl.root.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, "root", &batchreq.StatusReq{Attrs: batchreq.StatusNames("managers", "acl_users", "acl_hosts")}))
	got := map[string]string{}
	for _, a := range p.Status[0].Attrs {
		got[a.Name] = a.Value
	}
	if got["managers"] != "root@vm,alice@*.example.org,bob@vm" || got["acl_users"] != "" || got["acl_hosts"] != "vm" {
		t.Fatalf("server lists after the refusals: %v", got)
	}
	if v := statusQueueAttr(t, cl.root, "batch", "disallowed_types"); v != "interactive,job_array" {
		t.Fatalf("disallowed_types %q", v)
	}
	// the refusal is logged as the capture run's server logged it
	logs, _ := filepath.Glob(filepath.Join(cl.home, "server_logs", "*"))
	var all strings.Builder
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		all.Write(b)
	}
	want := ";0001;PBS_Server;Svr;PBS_Server;LOG_ERROR::Bad ACL entry in host list (15075) in manager_oper_chk, bad entry in acl: bob@bad host"
	if !strings.Contains(all.String(), want) {
		t.Fatalf("log lacks %q", want)
	}
}

// statusQueueAttr returns one attribute of a queue.
func statusQueueAttr(t *testing.T, c *client, queue, name string) string {
	t.Helper()
	p := c.do(batchreq.NewRequest(batchreq.PBS_BATCH_StatusQue, "root", &batchreq.StatusReq{ID: queue, Attrs: batchreq.StatusNames(name)}))
	if p.Code != 0 || len(p.Status) != 1 {
		t.Fatalf("status of queue %s: %d %q", queue, p.Code, p.Text)
	}
	v, _ := p.Status[0].Attrs.Get(name)
	return v
}

func TestValidHostPattern(t *testing.T) {
	for _, tc := range []struct {
		h  string
		ok bool
	}{
		{"vm", true}, {"node-01.example.org", true}, {"*", true}, {"*.example.org", true}, {"n_1", true},
		{"", false}, {".vm", false}, {"vm.", false}, {"a..b", false}, {"a b", false}, {"a/b", false}, {"a@b", false},
	} {
		if got := validHostPattern(tc.h); got != tc.ok {
			t.Errorf("validHostPattern(%q) = %v, want %v", tc.h, got, tc.ok)
		}
	}
}

// TestACLMatch checks user and host ACL matching (attr's rules: '*'
// stands for any run of characters, host names compare without case).
func TestACLMatch(t *testing.T) {
	users := []string{"root@vm", "alice", "bob@*.example.org", "carol@node*", "*@login"}
	for who, want := range map[string]bool{
		"root@vm": true, "root@VM": true, "root@vm2": false, "alice@anywhere": true,
		"bob@n1.example.org": true, "bob@example.org": false, "carol@node12": true, "carol@xnode12": false,
		"dave@login": true, "dave@vm": false,
	} {
		if got := aclMatchUser(users, who); got != want {
			t.Errorf("aclMatchUser(%q) = %v, want %v", who, got, want)
		}
	}
	for _, c := range []struct {
		pattern, host string
		want          bool
	}{
		{"vm", "VM", true}, {"*", "any", true}, {"*.example.org", "n1.example.org", true},
		{"*.example.org", "example.org", false}, {"node*", "node07", true}, {"vm", "vm2", false},
	} {
		if got := hostMatch(c.pattern, c.host); got != c.want {
			t.Errorf("hostMatch(%q, %q) = %v, want %v", c.pattern, c.host, got, c.want)
		}
	}
}
