package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	for v, want := range map[string]Options{
		"":                     {Depth: 1},
		"u":                    {Depth: 1},
		"n":                    {Never: true, Depth: 1},
		"none":                 {Never: true, Depth: 1},
		"s":                    {Shutdown: true, Depth: 1},
		"c":                    {Periodic: true, Depth: 1},
		"c=5":                  {Periodic: true, Interval: 5 * time.Minute, Depth: 1},
		"enabled":              {Enabled: true, Depth: 1},
		"shutdown,periodic":    {Shutdown: true, Periodic: true, Depth: 1},
		"interval=2,depth=3":   {Periodic: true, Interval: 2 * time.Minute, Depth: 3},
		"enabled,dir=/scratch": {Enabled: true, Dir: "/scratch", Depth: 1},
	} {
		got, err := ParseOptions(v)
		if err != nil || got != want {
			t.Errorf("ParseOptions(%q) = %+v, %v; want %+v", v, got, err, want)
		}
	}
	for _, bad := range []string{"x", "c=x", "c=-1", "depth=0", "depth", "dir=relative", "n=1", "interval"} {
		if _, err := ParseOptions(bad); err == nil {
			t.Errorf("ParseOptions(%q) accepted", bad)
		}
	}
}

func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{"u", "c=5,depth=2", "enabled,dir=/x", "s,shutdown", ",,=", "c=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOptions(s)
		if err == nil && (o.Depth < 1 || o.Interval < 0 || o.Dir != "" && !filepath.IsAbs(o.Dir)) {
			t.Errorf("ParseOptions(%q) = %+v", s, o)
		}
	})
}

func TestRecordAndLast(t *testing.T) {
	dir := t.TempDir()
	if _, err := Last(dir); err != ErrNone {
		t.Fatalf("Last of an empty directory: %v", err)
	}
	for i, sec := range []int64{100, 200, 300} {
		name := Name("7.srv", time.Unix(sec, 0))
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := Record(dir, name, 2); err != nil {
			t.Fatal(err)
		}
		if got, err := Last(dir); err != nil || got != name {
			t.Errorf("after checkpoint %d: Last = %q, %v", i, got, err)
		}
	}
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{".last", "ckpt.7.srv.200", "ckpt.7.srv.300"}; !reflect.DeepEqual(left, want) {
		t.Errorf("kept %q, want %q (depth 2)", left, want)
	}
	os.WriteFile(filepath.Join(dir, ".last"), []byte("../etc\n"), 0o600)
	if _, err := Last(dir); err == nil {
		t.Error("a name leaving the directory accepted")
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "ckpt")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" > \"$5/$6\"\necho \"$PBS_CHECKPOINT_DIR $PBS_CHECKPOINT_NAME $FOO\" >> \"$5/$6\"\n[ \"$7\" = 0 ] || { echo failing on purpose >&2; exit 3; }\n"), 0o755)
	j := Job{SessionID: 42, ID: "7.srv", User: "u", Group: "g", Dir: dir, Env: []string{"FOO=bar", "PATH=/usr/bin:/bin"}, Home: dir}
	if err := Run(context.Background(), script, j, "ckpt.7.srv.1", 0, 2, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ckpt.7.srv.1")); string(b) != "42 7.srv u g "+dir+" ckpt.7.srv.1 0 2\n"+dir+" ckpt.7.srv.1 bar\n" {
		t.Errorf("the script saw %q", b)
	}
	err := Run(context.Background(), script, j, "ckpt.7.srv.2", 15, 1, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exit status 3: failing on purpose") {
		t.Errorf("failing script: %v", err)
	}
	os.WriteFile(script, []byte("#!/bin/sh\nsleep 60 &\nsleep 60\n"), 0o755)
	if err := Run(context.Background(), script, j, "x", 0, 1, 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "no end within") {
		t.Errorf("stuck script: %v", err)
	}
}
