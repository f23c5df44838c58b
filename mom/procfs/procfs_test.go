package procfs

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	line := "17702 (bash (x) y) S 17700 17700 17700 0 -1 4194304 300 0 0 0 12 3 4 5 20 0 1 0 123 9826304 812 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
	p, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != 17702 || p.Comm != "bash (x) y" || p.State != 'S' || p.PPID != 17700 || p.Session != 17700 {
		t.Errorf("got %+v", p)
	}
	if p.CPUTicks() != 24 || p.VSize != 9826304 || p.RSS != 812 {
		t.Errorf("got %+v", p)
	}
	for _, bad := range []string{"", "1 (x", "x (y) S 1 2 3", "1 (x) S a 2 3 0 -1 0 0 0 0 0 1 2 3 4 0 0 1 0 1 2 3"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) succeeded", bad)
		}
	}
}

func TestSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	p, err := Default.Proc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != os.Getpid() || p.VSize == 0 || p.UID != os.Getuid() {
		t.Errorf("self = %+v", p)
	}
	sid, _, _ := sessionOf(p)
	procs, err := Default.Session(sid)
	if err != nil || len(procs) == 0 {
		t.Errorf("session %d: %v %d", sid, err, len(procs))
	}
}

func sessionOf(p Proc) (int, int, int) { return p.Session, p.PGRP, p.PPID }

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 0 0 0 0 0 1 2 3 4 0 0 1 0 1 2 3 4"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseStat(b) })
}
