package capturetest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// outcome is a testing.TB whose Fatal and Skip end only the goroutine
// calling them and record the message.
type outcome struct {
	testing.TB
	fatal, skipped string
}

func (o *outcome) Helper() {}

func (o *outcome) Fatalf(format string, args ...any) {
	o.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (o *outcome) Fatal(args ...any) { o.Fatalf("%s", fmt.Sprint(args...)) }

func (o *outcome) Skip(args ...any) { o.Skipf("%s", fmt.Sprint(args...)) }

func (o *outcome) Skipf(format string, args ...any) {
	o.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a new outcome in a goroutine of its own and returns
// the outcome.
func run(t *testing.T, f func(tb testing.TB)) *outcome {
	o := &outcome{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); f(o) }()
	<-done
	return o
}

func TestDirSkipsWithoutModule(t *testing.T) {
	t.Chdir(t.TempDir())
	o := run(t, func(tb testing.TB) { Dir(tb) })
	if !strings.Contains(o.skipped, "not available") || o.fatal != "" {
		t.Errorf("outside a module: skipped %q, fatal %q", o.skipped, o.fatal)
	}
}

func TestDirSkipsWithoutShared(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	o := run(t, func(tb testing.TB) { Dir(tb) })
	if o.skipped == "" || o.fatal != "" {
		t.Errorf("no ../shared: skipped %q, fatal %q", o.skipped, o.fatal)
	}
}

func TestPcapFilesIn(t *testing.T) {
	dir := t.TempDir()
	o := run(t, func(tb testing.TB) { pcapFilesIn(tb, dir) })
	if !strings.Contains(o.fatal, "no captures") {
		t.Errorf("empty directory: fatal %q", o.fatal)
	}
	for _, name := range []string{"2-b.pcap", "1-a.pcap", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if o := run(t, func(tb testing.TB) { got = pcapFilesIn(tb, dir) }); o.fatal != "" {
		t.Fatal(o.fatal)
	}
	want := []string{filepath.Join(dir, "1-a.pcap"), filepath.Join(dir, "2-b.pcap")}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files %q, want %q", got, want)
	}
}

func TestShared(t *testing.T) {
	files := PcapFiles(t) // skips without the captures
	c := Read(t, filepath.Base(files[0]))
	if len(c.Conns) == 0 && len(c.Datagrams) == 0 {
		t.Errorf("%s: no connection or datagram", files[0])
	}
	o := run(t, func(tb testing.TB) { Read(tb, "no-such-capture.pcap") })
	if o.fatal == "" {
		t.Error("reading a missing capture did not fail")
	}
}

func TestScenario(t *testing.T) {
	sc, c := Scenario(t, 81) // skips without the captures
	if sc.ID != 81 || sc.QsubListenPort == 0 {
		t.Errorf("scenario 81: %+v", sc)
	}
	found := false
	for _, cn := range c.Conns {
		found = found || int(cn.Server.Port()) == sc.QsubListenPort
	}
	if !found {
		t.Errorf("capture %s: no connection to qsub's port %d", sc.Pcap, sc.QsubListenPort)
	}
	o := run(t, func(tb testing.TB) { Scenario(tb, -1) })
	if !strings.Contains(o.skipped, "no scenario -1") {
		t.Errorf("unknown scenario: skipped %q, fatal %q", o.skipped, o.fatal)
	}
}
