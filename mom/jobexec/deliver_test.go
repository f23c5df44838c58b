package jobexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopbs/mom/config"
)

func TestResolveRemote(t *testing.T) {
	te := newTestEnv(t, "$usecp *.example.org:/home /nfs/home\n$usecp gw:/tmp /scratch\n")
	tests := []struct {
		in    string
		path  string
		local bool
	}{
		{"node1:/a/b", "/a/b", true},
		{"node1.example.com:/a/b", "/a/b", true},
		{"localhost.localdomain:/x", "/x", true},
		{"/plain/path", "/plain/path", true},
		{"h.example.org:/home/alice/o", "/nfs/home/alice/o", true},
		{"h.example.org:/homer/o", "/homer/o", false},
		{"gw:/tmp/f", "/scratch/f", true},
		{"other:/tmp/f", "/tmp/f", false},
		{"node2:/a", "/a", false},
	}
	for _, tc := range tests {
		_, p, local := te.eng.ResolveRemote(tc.in)
		if p != tc.path || local != tc.local {
			t.Errorf("ResolveRemote(%q) = %q, %v; want %q, %v", tc.in, p, local, tc.path, tc.local)
		}
	}
}

func TestCopyFilesStageOut(t *testing.T) {
	base := ""
	te := newTestEnv(t, "", func(o *Options) { o.CopyRetryPause = 10 * time.Millisecond })
	base = filepath.Dir(te.uhome)
	fake := filepath.Join(base, "fakercp")
	rec := filepath.Join(te.uhome, "rcp.args")
	writeRootScript(t, fake, `echo "$@" > `+rec+"\n", 0o755)
	te.setConfig(func(c *config.Config) { c.RcpCmd, c.RcpArgs = fake, "-rpB" })

	j := te.job("40.srv", "echo to-stdout\necho to-stderr >&2\necho data > out.txt\n")
	te.run(j)
	ctx := context.Background()
	outDst := filepath.Join(te.uhome, "testjob.o40")
	req := &CopyRequest{JobID: "40.srv", Owner: testUser, User: testUser, Direction: STAGE_DIR_OUT,
		Pairs: []CopyPair{
			{STDJOBFILE, "40.srv.OU", "node1:" + outDst},
			{STDJOBFILE, "40.srv.ER", "faraway:/remote/testjob.e40"},
			{STAGEFILE, "out.txt", "node1:" + filepath.Join(te.uhome, "out.txt")},
		}}
	if err := te.eng.CopyFiles(ctx, req); err != nil {
		t.Fatalf("CopyFiles: %v", err)
	}
	if b, err := os.ReadFile(outDst); err != nil || string(b) != "to-stdout\n" {
		t.Errorf("delivered stdout %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(te.home, "spool", "40.srv.OU")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("spool .OU not removed: %v", err)
	}
	if b, _ := os.ReadFile(rec); string(b) != "-rpB "+filepath.Join(te.home, "spool", "40.srv.ER")+" "+testUser+"@faraway:/remote/testjob.e40\n" {
		t.Errorf("remote copy args %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(te.uhome, "out.txt")); err != nil || string(b) != "data\n" {
		t.Errorf("same-file stage-out changed the file: %q, %v", b, err)
	}

	// Undeliverable: a destination directory the user cannot write.
	j = te.job("41.srv", "echo lost\n")
	te.run(j)
	req = &CopyRequest{JobID: "41.srv", Owner: testUser, User: testUser, Direction: STAGE_DIR_OUT,
		Pairs: []CopyPair{{STDJOBFILE, "41.srv.OU", "node1:/proc/forbidden/testjob.o41"}}}
	err := te.eng.CopyFiles(ctx, req)
	var ce *CopyError
	if !errors.As(err, &ce) {
		t.Fatalf("CopyFiles error %v", err)
	}
	kept := filepath.Join(te.home, "undelivered", "41.srv.OU")
	for _, want := range []string{"Unable to copy file " + filepath.Join(te.home, "spool", "41.srv.OU") + " to node1:/proc/forbidden/testjob.o41",
		"*** error from copy\n", "*** end error output\n", "Output retained on that host in: " + kept} {
		if !strings.Contains(ce.Text, want) {
			t.Errorf("error text lacks %q:\n%s", want, ce.Text)
		}
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "lost\n" {
		t.Errorf("undelivered file %q, %v", b, err)
	}
}

func TestStageInAndDelete(t *testing.T) {
	te := newTestEnv(t, "")
	src := filepath.Join(te.uhome, "in.src")
	if err := os.WriteFile(src, []byte("input\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := &CopyRequest{JobID: "50.srv", Owner: testUser, User: testUser, Direction: STAGE_DIR_IN,
		Pairs: []CopyPair{{STAGEFILE, "in.txt", "node1:$HOME/in.src"}}}
	if err := te.eng.CopyFiles(ctx, req); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(te.uhome, "in.txt")
	if b, err := os.ReadFile(dst); err != nil || string(b) != "input\n" {
		t.Fatalf("staged-in file %q, %v", b, err)
	}
	if err := te.eng.DeleteFiles(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("DeleteFiles left %s", dst)
	}
	bad := &CopyRequest{JobID: "50.srv", Owner: testUser, User: testUser, Direction: STAGE_DIR_IN,
		Pairs: []CopyPair{{STAGEFILE, "x", "node1:$NOPE/x"}}}
	if err := te.eng.CopyFiles(ctx, bad); err == nil || !strings.Contains(err.Error(), "undefined variable NOPE") {
		t.Errorf("undefined variable: %v", err)
	}
}
