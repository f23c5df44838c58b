package pbs

import (
	"os"
	"path/filepath"
	"testing"

	"gopbs/batchreq"
)

func TestFindIff(t *testing.T) {
	root := t.TempDir()
	dirs := map[string]string{}
	for _, d := range []string{"bindir", "sbin", "prefix/bin", "prefix/sbin", "alone/bin", "path1", "empty", "nohelper/bin"} {
		p := filepath.Join(root, d)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs[d] = p
	}
	for _, d := range []string{"bindir", "sbin", "prefix/sbin", "alone/bin", "path1"} {
		if err := os.WriteFile(filepath.Join(dirs[d], IffName), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A directory named pbs_iff is not the helper.
	if err := os.Mkdir(filepath.Join(dirs["empty"], IffName), 0o755); err != nil {
		t.Fatal(err)
	}
	exe := func(d string) string { return filepath.Join(dirs[d], "qstat") }
	tests := []struct {
		name                    string
		binDir, sbin, exe, path string
		want                    string // directory holding the result, "" for not found
	}{
		{"PBSBINDIR first", dirs["bindir"], dirs["sbin"], exe("alone/bin"), dirs["path1"], dirs["bindir"]},
		{"installed sbin", "", dirs["sbin"], exe("alone/bin"), dirs["path1"], dirs["sbin"]},
		{"PBSBINDIR without the helper", dirs["empty"], dirs["sbin"], "", "", dirs["sbin"]},
		{"next to the executable", "", dirs["empty"], exe("alone/bin"), dirs["path1"], dirs["alone/bin"]},
		{"sibling sbin of the executable", "", dirs["empty"], exe("prefix/bin"), dirs["path1"], dirs["prefix/sbin"]},
		{"first PATH element", "", dirs["empty"], exe("nohelper/bin"), dirs["path1"] + ":" + dirs["bindir"], dirs["path1"]},
		{"only the first PATH element", "", "", "", dirs["empty"] + ":" + dirs["path1"], ""},
		{"nowhere", "", dirs["empty"], "", "", ""},
	}
	for _, tt := range tests {
		got, err := findIff(tt.binDir, tt.sbin, tt.exe, tt.path)
		if tt.want == "" {
			if Errno(err) != batchreq.PBSE_IFF_NOT_FOUND {
				t.Errorf("%s: %q, %v; want PBSE_IFF_NOT_FOUND", tt.name, got, err)
			}
			continue
		}
		if err != nil || got != filepath.Join(tt.want, IffName) {
			t.Errorf("%s: %q, %v; want %s", tt.name, got, err, filepath.Join(tt.want, IffName))
		}
	}
}

func TestFindIffEnvironment(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IffName), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PBSBINDIR", dir)
	if got, err := FindIff(); err != nil || got != filepath.Join(dir, IffName) {
		t.Errorf("FindIff with PBSBINDIR = %q, %v", got, err)
	}
}
