package torque

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gopbs/jobfile"
)

// sharedHome returns ../shared/torque-home beside the repository, or
// skips the test saying it is absent.
func sharedHome(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "torque-home")
	if _, err := os.Stat(filepath.Join(dir, "server_priv")); err != nil {
		t.Skipf("../shared/torque-home is absent: %v", err)
	}
	return dir
}

func TestReadSharedHome(t *testing.T) {
	h, err := Read(sharedHome(t))
	if err != nil {
		t.Fatal(err)
	}
	if h.ServerName != "vm" || h.Server.NextJobID != 11 || h.Server.NumQueues != 4 {
		t.Errorf("server name %q, next job %d, queues %d", h.ServerName, h.Server.NextJobID, h.Server.NumQueues)
	}
	var names []string
	for _, a := range h.Server.Attrs {
		names = append(names, a.Name)
	}
	if !slices.Contains(names, "keep_completed") || names[0] != "scheduling" || names[len(names)-1] != "net_counter" {
		t.Errorf("server attributes %v", names)
	}
	if h.ServerACLs["managers"] != "root@vm\n" || h.ServerACLs["acl_hosts"] != "vm\n" {
		t.Errorf("server ACLs %q", h.ServerACLs)
	}
	var qs []string
	for _, q := range h.Queues {
		qs = append(qs, q.Name)
	}
	if !slices.Equal(qs, []string{"batch", "gpu", "route", "short"}) {
		t.Errorf("queues %v", qs)
	}
	if q := h.Queues[1]; q.Type != QueueExec || q.ACLs["acl_users"] != "alice\n" {
		t.Errorf("queue gpu: type %d, ACLs %q", q.Type, q.ACLs)
	}
	if q := h.Queues[2]; q.Type != QueueRoute || q.Attrs[2].Name != "route_destinations" || q.Attrs[2].Value != "batch\n" {
		t.Errorf("queue route: type %d, attributes %+v", q.Type, q.Attrs)
	}
	if len(h.Nodes) != 1 || h.Nodes[0] != (Node{Line: "vm np=2 fast", Name: "vm", Note: "imported from TORQUE"}) {
		t.Errorf("nodes %+v", h.Nodes)
	}
	if len(h.Arrays) != 1 {
		t.Fatalf("arrays %+v", h.Arrays)
	}
	a := h.Arrays[0]
	if a.ParentID != "3[].vm" || a.Prefix != "3.vm" || a.Owner != "alice@vm" || a.SubmitHost != "vm" ||
		a.Size != 4 || a.NumJobs != 4 || a.SlotLimit != -1 || a.Cloned != 4 || len(a.Pending) != 0 {
		t.Errorf("array %+v", a)
	}
	var ids []string
	for _, j := range h.Jobs {
		ids = append(ids, j.File.ID)
	}
	want := []string{"0.vm", "1.vm", "2.vm", "3[].vm", "4.vm", "5.vm", "6.vm", "7.vm", "3[0].vm", "3[1].vm", "3[2].vm", "3[3].vm", "9.vm", "10.vm"}
	if !slices.Equal(ids, want) {
		t.Errorf("jobs in recovery order %v, want %v", ids, want)
	}
	for _, j := range h.Jobs {
		sub := strings.Contains(j.File.ID, "[") && !j.Template
		if sub != (j.Script == nil) {
			t.Errorf("job %s: script %q", j.File.ID, j.Script)
		}
		if j.Template != (j.File.ID == "3[].vm") {
			t.Errorf("job %s: template %v", j.File.ID, j.Template)
		}
	}
	if j := h.Jobs[0]; j.File.State != 4 || j.File.Substate != 42 || j.Queue() != "batch" || j.Rank() != 1 {
		t.Errorf("job 0.vm: state %d/%d queue %s rank %d", j.File.State, j.File.Substate, j.Queue(), j.Rank())
	}
}

// record builds attribute records and the end marker.
func record(attrs ...Attr) []byte {
	var b []byte
	for _, a := range attrs {
		b = jobfile.AppendAttr(b, a)
	}
	return jobfile.AppendEndMarker(b)
}

func serverDB(next int32, attrs ...Attr) []byte {
	b := make([]byte, serverDBFixed)
	binary.LittleEndian.PutUint32(b[0:], 3)
	binary.LittleEndian.PutUint32(b[4:], 2)
	binary.LittleEndian.PutUint32(b[8:], uint32(next))
	binary.LittleEndian.PutUint64(b[16:], 1795770617)
	return append(b, record(attrs...)...)
}

func queueFile(name string, typ int32, attrs ...Attr) []byte {
	b := make([]byte, queueFixed)
	binary.LittleEndian.PutUint32(b[4:], uint32(typ))
	copy(b[queueNameOff:queueNameOff+queueNameSize], name)
	return append(b, record(attrs...)...)
}

func arrayFile(parent, prefix string, pending ...IndexRange) []byte {
	b := make([]byte, arrayFixed)
	le := binary.LittleEndian
	for i, v := range []int32{arrayVersion, 10, 10, -1, 1, 2, 3, 4, 5, 6} {
		le.PutUint32(b[4*i:], uint32(v))
	}
	copy(b[arrayOwnerOff:], "bob@host")
	copy(b[arrayParentOff:], parent)
	copy(b[arrayPrefixOff:], prefix)
	copy(b[arraySubmitOff:], "host")
	le.PutUint32(b[arrayPurgedOff:], 7)
	le.PutUint32(b[arrayTokensOff:], uint32(len(pending)))
	for _, r := range pending {
		tok := make([]byte, arrayTokenSize)
		le.PutUint32(tok[arrayTokenFields:], uint32(r.Start))
		le.PutUint32(tok[arrayTokenFields+4:], uint32(r.End))
		b = append(b, tok...)
	}
	return b
}

func TestParseServerDB(t *testing.T) {
	b := serverDB(42, Attr{Name: "scheduling", Value: "True", Flags: 1}, Attr{Name: "resources_default", Resource: "walltime", Value: "01:00:00", Flags: 3})
	s, err := ParseServerDB(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.NextJobID != 42 || s.NumJobs != 3 || s.NumQueues != 2 || s.SaveTime != 1795770617 || len(s.Attrs) != 2 ||
		s.Attrs[1].Resource != "walltime" || s.Attrs[1].Value != "01:00:00" || s.Attrs[1].Flags != 3 {
		t.Errorf("%+v", s)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", b[:10], "shorter than the fixed part"},
		{"cut", b[:len(b)-1], "attribute header"},
		{"trailing", append(append([]byte(nil), b...), 0), "1 bytes after the end marker"},
		{"xml", []byte("<server_db>\n<numjobs>0</numjobs>"), "XML"},
	} {
		if _, err := ParseServerDB(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := ParseServerDB(b[:10]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short file: %v does not wrap io.ErrUnexpectedEOF", err)
	}
}

func TestParseQueue(t *testing.T) {
	b := queueFile("fifteen_chars_q", QueueRoute, Attr{Name: "queue_type", Value: "Route", Flags: 1})
	q, err := ParseQueue(b)
	if err != nil {
		t.Fatal(err)
	}
	if q.Name != "fifteen_chars_q" || q.Type != QueueRoute || len(q.Attrs) != 1 {
		t.Errorf("%+v", q)
	}
	bad := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(bad[4:], 7)
	if _, err := ParseQueue(bad); err == nil || !strings.Contains(err.Error(), "unknown queue type 7") {
		t.Errorf("bad type: %v", err)
	}
	if _, err := ParseQueue(b[:queueFixed]); err == nil {
		t.Error("queue without records accepted")
	}
}

func TestParseArray(t *testing.T) {
	a, err := ParseArray(arrayFile("12[].srv", "12.srv", IndexRange{5, 9}))
	if err != nil {
		t.Fatal(err)
	}
	want := Array{Version: 4, Size: 10, NumJobs: 10, SlotLimit: -1, Running: 1, Done: 2, Cloned: 3, Started: 4,
		Failed: 5, Successful: 6, Purged: 7, Owner: "bob@host", ParentID: "12[].srv", Prefix: "12.srv", SubmitHost: "host"}
	if len(a.Pending) != 1 || a.Pending[0] != (IndexRange{5, 9}) {
		t.Errorf("pending %v", a.Pending)
	}
	a.Pending = nil
	if !reflect.DeepEqual(*a, want) {
		t.Errorf("got %+v\nwant %+v", *a, want)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"short", arrayFile("1[].s", "1.s")[:100], "shorter"},
		{"tokens", arrayFile("1[].s", "1.s", IndexRange{1, 2})[:arrayFixed+10], "pending index ranges do not fit"},
		{"range", arrayFile("1[].s", "1.s", IndexRange{5, 2}), "out of range"},
		{"parent", arrayFile("", "1.s"), "no parent id"},
		{"version", func() []byte { b := arrayFile("1[].s", "1.s"); b[0] = 3; return b }(), "version 3"},
	} {
		if _, err := ParseArray(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// writeHome writes a minimal server_priv with the given extra files.
func writeHome(t *testing.T, files map[string][]byte) string {
	t.Helper()
	home := t.TempDir()
	all := map[string][]byte{"server_priv/serverdb": serverDB(1)}
	for k, v := range files {
		all[k] = v
	}
	for name, b := range all {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func TestReadErrorsNameTheFile(t *testing.T) {
	job := &jobfile.Job{Version: jobfile.QSVersion, State: 1, Substate: 10, ID: "1.srv", Prefix: "1.srv", Queue: "batch"}
	good, err := job.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		b    []byte
		want string
	}{
		{"server_priv/jobs/2.srv.JB", good, `file prefix "1.srv" does not match`},
		{"server_priv/jobs/1.srv.JB", good[:100], "shorter than its fixed part"},
		{"server_priv/queues/batch", []byte("junk"), "shorter than the fixed part"},
		{"server_priv/arrays/1.srv.AR", arrayFile("1[].srv", "2.srv"), "does not match the file name"},
		{"server_priv/node_status", []byte("n1 2\n"), "bad node state"},
		{"server_priv/node_note", []byte("lonely\n"), "want \"<node> <note>\""},
	} {
		home := writeHome(t, map[string][]byte{tc.file: tc.b})
		_, err := Read(home)
		path := filepath.Join(home, tc.file)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s with %q", tc.file, err, path, tc.want)
		}
	}
	if _, err := Read(t.TempDir()); err == nil {
		t.Error("a home without server_priv was read")
	}
}

func TestReadSkipsLeftovers(t *testing.T) {
	home := writeHome(t, map[string][]byte{
		"server_priv/queues/batch.new": []byte("torn"),
		"server_priv/jobs/7.srv.BD":    []byte("corrupt job, renamed by TORQUE"),
		"server_priv/jobs/7.srv.JC":    []byte("temporary"),
		"server_priv/node_status":      []byte("n1 1\n"),
		"server_priv/nodes":            []byte("# comment\nn1 np=4 big\n\nn2:ts\n"),
		"server_priv/node_note":        []byte("n2 disk replaced\n"),
	})
	h, err := Read(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Queues) != 0 || len(h.Jobs) != 0 {
		t.Errorf("leftovers read: queues %v jobs %v", h.Queues, h.Jobs)
	}
	want := []Node{{Line: "n1 np=4 big", Name: "n1", State: NodeOffline}, {Line: "n2:ts", Name: "n2", Note: "disk replaced"}}
	if !slices.Equal(h.Nodes, want) {
		t.Errorf("nodes %+v, want %+v", h.Nodes, want)
	}
}

// seeds returns the shared home's files of one kind, if present.
func seeds(pattern string) [][]byte {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "torque-home", "server_priv")
	paths, _ := filepath.Glob(filepath.Join(dir, pattern))
	var out [][]byte
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, b)
		}
	}
	return out
}

func FuzzParseServerDB(f *testing.F) {
	f.Add(serverDB(5, Attr{Name: "scheduling", Value: "True"}))
	for _, b := range seeds("serverdb") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := ParseServerDB(b); err == nil && (s.NextJobID < 0 || s.NumJobs < 0) {
			t.Fatalf("negative counts accepted: %+v", s)
		}
	})
}

func FuzzParseQueue(f *testing.F) {
	f.Add(queueFile("batch", QueueExec, Attr{Name: "queue_type", Value: "Execution"}))
	for _, b := range seeds("queues/*") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := ParseQueue(b); err == nil && (q.Type < 0 || q.Type > QueueRoutePl) {
			t.Fatalf("queue type %d accepted", q.Type)
		}
	})
}

func FuzzParseArray(f *testing.F) {
	f.Add(arrayFile("1[].s", "1.s", IndexRange{0, 3}))
	for _, b := range seeds("arrays/*.AR") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseArray(b)
		if err != nil {
			return
		}
		if len(a.Pending)*arrayTokenSize != len(b)-arrayFixed {
			t.Fatalf("%d pending ranges from %d bytes", len(a.Pending), len(b))
		}
		for _, r := range a.Pending {
			if r.Start < 0 || r.End < r.Start {
				t.Fatalf("range %v accepted", r)
			}
		}
	})
}
