package sysinfo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLoadState(t *testing.T) {
	var s LoadState
	steps := []struct {
		load          float64
		busy, changed bool
	}{
		{1.0, false, false}, {4.0, true, true}, {3.0, true, false}, {2.0, false, true}, {2.5, false, false},
	}
	for i, st := range steps {
		busy, changed := s.Update(st.load, 4, 2)
		if busy != st.busy || changed != st.changed {
			t.Errorf("step %d: busy=%v changed=%v", i, busy, changed)
		}
	}
	if busy, _ := s.Update(100, -1, -1); busy {
		t.Error("busy without thresholds")
	}
}

func TestAutoLoad(t *testing.T) {
	tests := []struct {
		expr string
		want float64
		err  bool
	}{
		{"c", 8, false}, {"c*1.5", 12, false}, {"t+2", 5, false}, {"c/2", 4, false}, {"t-1", 2, false},
		{"x+1", 0, true}, {"c%2", 0, true}, {"c/0", 0, true}, {"", 0, true},
	}
	for _, tc := range tests {
		got, err := AutoLoad(tc.expr, 8, 3)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("AutoLoad(%q) = %v, %v", tc.expr, got, err)
		}
	}
}

func TestHealthCheck(t *testing.T) {
	if r := ParseHealthOutput("ok\nEVENT: hot\nERROR disk full\n"); !r.Down || r.Message != "ERROR disk full" {
		t.Errorf("%+v", r)
	}
	if r := ParseHealthOutput("EVENT: hot\n"); r.Down || r.Message != "EVENT: hot" {
		t.Errorf("%+v", r)
	}
	script := filepath.Join(t.TempDir(), "check")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'ERROR no scratch'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := RunHealthCheck(context.Background(), script, 5*time.Second)
	if err != nil || !r.Down || r.Message != "ERROR no scratch" {
		t.Errorf("%+v %v", r, err)
	}
}

func TestVarAttr(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "n")
	r := NewVarAttrRunner([]int{-1, 0}, []string{"echo once", "echo x >> " + counter + "; wc -l < " + counter})
	now := time.Unix(100, 0)
	r.now = func() time.Time { return now }
	if v := r.Value(context.Background()); v != "once;1" {
		t.Errorf("first = %q", v)
	}
	now = now.Add(time.Second)
	if v := r.Value(context.Background()); v != "once;2" {
		t.Errorf("second = %q", v)
	}
}
