package attr_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopbs/attr"
	"gopbs/internal/capture/capturetest"
)

// snapshotSection returns the lines of the "## <title>" section of
// server_priv-snapshot.txt that follow the "--attributes--" marker.
func snapshotSection(t *testing.T, title string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(capturetest.Dir(t), "server_priv-snapshot.txt"))
	if err != nil {
		t.Skip(err)
	}
	_, sec, ok := strings.Cut(string(b), "## "+title+"\n")
	if !ok {
		t.Fatalf("section %q not found", title)
	}
	if end := strings.Index(sec, "\n## "); end >= 0 {
		sec = sec[:end]
	}
	_, attrs, ok := strings.Cut(sec, "--attributes--\n")
	if !ok {
		t.Fatalf("section %q has no attributes", title)
	}
	return strings.Split(attrs, "\n")
}

// savedRecords parses printjob/printserverdb attribute lines: "name = value"
// where string-array values (saved newline-terminated) continue up to a
// blank line.
func savedRecords(t *testing.T, tab *attr.Table, lines []string) []attr.Entry {
	var out []attr.Entry
	for k := 0; k < len(lines); k++ {
		full, value, ok := strings.Cut(lines[k], " = ")
		if !ok {
			continue
		}
		name, resc, hasResc := strings.Cut(full, ".")
		d, found := tab.Lookup(name)
		if !found {
			t.Fatalf("unknown attribute %q", name)
		}
		if d.Type == attr.TypeStringArray || d.Type == attr.TypeACL {
			for k+1 < len(lines) && lines[k+1] != "" {
				k++
				value += "\n" + lines[k]
			}
			value += "\n"
			k++ // the blank line printed after the value's own newline
		}
		out = append(out, attr.Entry{Name: name, Resource: resc, HasResource: hasResc, Value: value})
	}
	return out
}

func checkSaveEncoding(t *testing.T, tab *attr.Table, records []attr.Entry) {
	t.Helper()
	s := attr.NewSet(tab)
	for _, r := range records {
		if err := s.Load(r.Name, r.Resource, r.HasResource, r.Value); err != nil {
			t.Fatalf("load %s.%s=%q: %v", r.Name, r.Resource, r.Value, err)
		}
	}
	got := s.AppendSave(nil)
	if len(got) != len(records) {
		t.Errorf("%d records encoded, want %d", len(got), len(records))
	}
	for k := 0; k < len(got) && k < len(records); k++ {
		g, w := got[k], records[k]
		if g.Name != w.Name || g.Resource != w.Resource || g.Value != w.Value {
			t.Errorf("record %d = %s.%s=%q, want %s.%s=%q", k, g.Name, g.Resource, g.Value, w.Name, w.Resource, w.Value)
		}
	}
}

// TestSnapshotJobFile rebuilds job 2.vm from printjob's listing of its
// .JB file and requires the save encoding to list the same records, in the
// same order, with the same text (string arrays newline-terminated).
func TestSnapshotJobFile(t *testing.T) {
	records := savedRecords(t, attr.JobTable(), snapshotSection(t, "/opt/torque/bin/printjob jobs/2.vm.JB"))
	if len(records) < 30 {
		t.Fatalf("only %d records parsed", len(records))
	}
	checkSaveEncoding(t, attr.JobTable(), records)
}

// TestSnapshotServerdb does the same for the server attributes of
// serverdb.
func TestSnapshotServerdb(t *testing.T) {
	records := savedRecords(t, attr.ServerTable(), snapshotSection(t, "/opt/torque/bin/printserverdb (run in server_priv)"))
	if len(records) < 10 {
		t.Fatalf("only %d records parsed", len(records))
	}
	checkSaveEncoding(t, attr.ServerTable(), records)
}
