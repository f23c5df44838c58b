package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopbs/internal/capture/capturetest"
	"gopbs/jobfile"
)

// capturesDir returns the shared capture directory, or skips the test
// when it or its server_priv snapshot is absent.
func capturesDir(t *testing.T) string {
	t.Helper()
	c := capturetest.Dir(t)
	if _, err := os.Stat(filepath.Join(c, "server_priv-snapshot.txt")); err != nil {
		t.Skip("captures (../shared/captures) without the server_priv snapshot")
	}
	return c
}

// snapshotSection returns the lines of one "## title" section of the
// server_priv snapshot, without the title and the separating empty line.
func snapshotSection(t *testing.T, title string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(capturesDir(t), "server_priv-snapshot.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "## ") {
			if in {
				break
			}
			in = strings.HasPrefix(l, "## "+title)
			continue
		}
		if in {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("snapshot has no section %q", title)
	}
	return lines[:len(lines)-1] // the empty line before the next title
}

// parseHexdump turns hexdump -C lines back into bytes.
func parseHexdump(t *testing.T, lines []string) []byte {
	t.Helper()
	var out, prev []byte
	repeat := false
	for _, l := range lines {
		if l == "*" {
			repeat = true
			continue
		}
		off, err := strconv.ParseUint(strings.Fields(l)[0], 16, 64)
		if err != nil {
			t.Fatalf("hexdump line %q: %v", l, err)
		}
		if repeat {
			for uint64(len(out)) < off {
				out = append(out, prev...)
			}
			repeat = false
		}
		if uint64(len(out)) != off {
			t.Fatalf("hexdump offset %x, have %x bytes", off, len(out))
		}
		hex, _, _ := strings.Cut(l[min(len(l), 10):], "|")
		var row []byte
		for _, h := range strings.Fields(hex) {
			v, err := strconv.ParseUint(h, 16, 8)
			if err != nil {
				t.Fatalf("hexdump line %q: %v", l, err)
			}
			row = append(row, byte(v))
		}
		out = append(out, row...)
		if len(row) > 0 {
			prev = row
		}
	}
	return out
}

// attrsFromPrintjob reads "name[.res] = value" lines back into attributes
// (a line without " = " continues the previous value).
func attrsFromPrintjob(lines []string) []jobfile.Attr {
	var attrs []jobfile.Attr
	for _, l := range lines {
		name, val, ok := strings.Cut(l, " = ")
		if !ok {
			attrs[len(attrs)-1].Value += "\n" + l
			continue
		}
		a := jobfile.Attr{Name: name, Value: val, Flags: 1}
		if n, r, ok := strings.Cut(name, "."); ok {
			a.Name, a.Resource = n, r
		}
		attrs = append(attrs, a)
	}
	return attrs
}

// TestTorqueJobFile decodes the real 2.vm.JB of the snapshot (its first
// 4096 bytes are dumped; the records after them are rebuilt from the
// snapshot's printjob output, depend in its fixed 2085-byte field) and
// checks that printjob prints exactly what TORQUE's printjob printed.
func TestTorqueJobFile(t *testing.T) {
	prefix := parseHexdump(t, snapshotSection(t, "hexdump -C jobs/2.vm.JB"))
	want := snapshotSection(t, "/opt/torque/bin/printjob jobs/2.vm.JB")
	if len(prefix) != 4096 {
		t.Fatalf("hexdump holds %d bytes", len(prefix))
	}
	j, err := jobfile.Parse(prefix)
	if !errors.Is(err, io.ErrUnexpectedEOF) || j == nil {
		t.Fatalf("truncated file: %v", err)
	}
	// The dump ends inside the depend record; keep the complete records.
	end := jobfile.FixedSize
	for _, a := range j.Attrs {
		end = len(jobfile.AppendAttr(make([]byte, end), a))
	}
	if j.Attrs[len(j.Attrs)-1].Name != "ctime" || !bytes.Contains(prefix[end:], []byte("depend\x00afterok:1.vm@vm")) {
		t.Fatalf("unexpected records before the cut: %v", j.Attrs)
	}
	file := bytes.Clone(prefix[:end])
	var tail []string
	for i, l := range want {
		if strings.HasPrefix(l, "depend = ") {
			tail = want[i+1 : len(want)-1]
			break
		}
	}
	// depend: the value in a 2085-byte field (spec 13 §2.3).
	dep := jobfile.AppendAttr(nil, jobfile.Attr{Name: "depend", Value: "afterok:1.vm@vm", Size: jobfile.DependFieldSize, Flags: 1})
	if !bytes.Equal(dep[64:88], prefix[end+64:end+88]) || !bytes.HasPrefix(dep[88:], prefix[end+88:]) {
		t.Fatalf("rebuilt depend record differs from the dump:\n%x\n%x", dep[64:120], prefix[end+64:end+120])
	}
	file = append(file, dep...)
	for _, a := range attrsFromPrintjob(tail) {
		file = jobfile.AppendAttr(file, a)
	}
	file = jobfile.AppendEndMarker(file)

	j, err = jobfile.Parse(file)
	if err != nil {
		t.Fatal(err)
	}
	if j.ID != "2.vm" || j.Prefix != "2.vm" || j.Queue != "batch" || j.UnType != jobfile.UnionExec || j.State != 2 || j.Substate != 22 {
		t.Errorf("fixed part %+v", j)
	}
	var got strings.Builder
	printTorqueJob(&got, j, false)
	if w := strings.Join(want, "\n") + "\n"; got.String() != w {
		t.Errorf("printjob output differs:\n got %q\nwant %q", got.String(), w)
	}
}

func FuzzParseTorqueJob(f *testing.F) {
	good := make([]byte, jobfile.FixedSize)
	copy(good, []byte{2, 3, 2, 0})
	good = jobfile.AppendAttr(good, jobfile.Attr{Name: "Resource_List", Resource: "nodes", Value: "1", Flags: 1})
	f.Add(jobfile.AppendEndMarker(good))
	f.Fuzz(func(t *testing.T, b []byte) {
		if j, err := jobfile.Parse(b); j != nil {
			printTorqueJob(io.Discard, j, err != nil)
		}
	})
}
