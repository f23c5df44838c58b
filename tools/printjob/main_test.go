package main

import (
	"encoding/binary"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopbs/jobfile"
	"gopbs/server/state"
	"gopbs/server/store"
)

// serverRecord encodes a job record of the GoPBS server store (record
// version 1 of server/persist.go).
func serverRecord(state, substate int64, queue string, attrs [][3]string) []byte {
	b := []byte{1} // record version
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	b = binary.AppendVarint(b, 7)        // seq
	b = binary.AppendVarint(b, state)    // state
	b = binary.AppendVarint(b, substate) // substate
	b = binary.AppendVarint(b, 0)        // hold
	str(queue)
	b = binary.AppendVarint(b, 3) // rank
	b = binary.AppendVarint(b, 0) // array index
	str("")                       // parent
	str("")                       // array request
	b = binary.AppendVarint(b, 0) // purge time
	b = binary.AppendVarint(b, int64(len(attrs)))
	for _, a := range attrs {
		str(a[0])
		str(a[1])
		str(a[2])
	}
	return b
}

func runPrintjob(args ...string) (int, string, string) {
	var stdout, stderr strings.Builder
	status := run(args, &stdout, &stderr)
	return status, stdout.String(), stderr.String()
}

func TestServerStore(t *testing.T) {
	home := t.TempDir()
	priv := filepath.Join(home, "server_priv")
	if err := os.MkdirAll(priv, 0o750); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(priv, storeFile)
	st, err := store.OpenBolt(db)
	if err != nil {
		t.Fatal(err)
	}
	rec := serverRecord(1, 10, "batch", [][3]string{{"Job_Name", "", "sleep"}, {"Resource_List", "walltime", "01:00:00"}})
	if err := st.Apply(store.Put(store.Jobs, "7.srv", rec), store.Put(store.Script, "7.srv", []byte("#!/bin/sh\nsleep 1\n")),
		store.Put(store.Jobs, "8.srv", rec)); err != nil {
		t.Fatal(err)
	}

	// While the server holds the database, printjob refuses to wait.
	status, _, stderr := runPrintjob("-d", home, "7.srv")
	if status != 1 || !strings.Contains(stderr, "running pbs_server") {
		t.Errorf("locked store: status %d, stderr %q", status, stderr)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	want := rule + "jobid:\t7.srv\n" + rule + "format:\t\tGoPBS pbs_server store record\n" +
		"state:\t\t0x1 (Q)\nsubstate:\t0xa (10)\nhold:\t\t0x0\nqueue:\t\tbatch\nqueue rank:\t3\n" +
		"--attributes--\nJob_Name = sleep\nResource_List.walltime = 01:00:00\n\n"
	for _, args := range [][]string{{"-d", home, "7.srv"}, {"-d", home, "7"}} {
		status, stdout, stderr := runPrintjob(args...)
		if status != 0 || stdout != want || stderr != "" {
			t.Errorf("%q: status %d\nstdout %q\nwant   %q\nstderr %q", args, status, stdout, want, stderr)
		}
	}
	status, stdout, _ := runPrintjob("-s", "-a", "-d", home, "7.srv")
	if status != 0 || !strings.HasSuffix(stdout, "queue rank:\t3\n\n--script--\n#!/bin/sh\nsleep 1\n") {
		t.Errorf("-s -a: status %d, stdout %q", status, stdout)
	}

	// Later changes are seen (how a log not yet applied to the database
	// is read is package store's test: its layout is the store's own).
	if st, err = store.OpenBolt(db); err != nil {
		t.Fatal(err)
	}
	held := serverRecord(2, 20, "batch", [][3]string{{"Job_Name", "", "sleep"}})
	if err := st.Apply(store.Put(store.Jobs, "7.srv", held), store.Del(store.Jobs, "8.srv")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	status, stdout, _ = runPrintjob("-d", home, "7.srv")
	if status != 0 || !strings.Contains(stdout, "state:\t\t0x2 (H)\n") {
		t.Errorf("after the log: status %d, stdout %q", status, stdout)
	}
	status, _, stderr = runPrintjob("-d", home, "8.srv")
	if status != 1 || stderr != "printjob: 8.srv: no such job\n" {
		t.Errorf("deleted in the log: status %d, stderr %q", status, stderr)
	}
}

// TestMomJobFile prints a MOM's job file (union type mom, TM info after
// the end marker), as pbs_mom writes it, by path and by job id.
func TestMomJobFile(t *testing.T) {
	j := &jobfile.Job{Version: jobfile.QSVersion, State: 4, Substate: 42, Svrflags: 1, Stime: 1763780000,
		ID: "12.vm", Prefix: "12.vm", Queue: "batch",
		Attrs: []jobfile.Attr{
			{Name: "Job_Owner", Value: "alice@vm", Flags: 1},
			{Name: "Resource_List", Resource: "nodes", Value: "1", Flags: 1},
		}}
	j.SetMom(jobfile.Mom{ServerAddr: netip.MustParseAddr("127.0.0.1"), ExitStatus: 0, UID: 1000, GID: 100})
	j.SetTM(jobfile.TM{Stdout: 40000, Stderr: 40000, NextTaskID: 2, NodeID: 0})
	b, err := j.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "12.vm.JB")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	want := rule + "jobid:\t12.vm\n" + rule + "ji_qs version:\t0x00020302\nstate:\t\t0x4\nsubstate:\t0x2a (42)\n" +
		"svrflgs:\t0x1 (1)\nordering:\t0\ninter prior:\t0\nstime:\t\t1763780000\nfile base:\t12.vm\n" +
		"queue:\t\tbatch\ndestin:\t\t\nunion type mom:\n\tsvraddr\t2130706433\n\texitst\t0\n\tuid\t1000\n\tgid\t100\n" +
		"--attributes--\nJob_Owner = alice@vm\nResource_List.nodes = 1\n" +
		"--mom tm info--\nstdout\t40000\nstderr\t40000\ntaskid\t2\nnodeid\t0\n\n"
	status, stdout, stderr := runPrintjob(path)
	if status != 0 || stdout != want || stderr != "" {
		t.Errorf("status %d\nstdout %q\nwant   %q\nstderr %q", status, stdout, want, stderr)
	}
	// Found by job id under mom_priv/jobs too.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "mom_priv", "jobs"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "mom_priv", "jobs", "12.vm.JB"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if status, stdout, _ := runPrintjob("-d", home, "12"); status != 0 || stdout != want {
		t.Errorf("by id: status %d, stdout %q", status, stdout)
	}
}

func TestPrintjobErrors(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "x.JB")
	if err := os.WriteFile(garbage, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	for _, tc := range []struct {
		args   []string
		status int
		stderr string
	}{
		{nil, 2, usageText},
		{[]string{"-x", "1"}, 2, "printjob: invalid option -- 'x'\n" + usageText},
		{[]string{"-d"}, 2, "printjob: option requires an argument -- 'd'\n" + usageText},
		{[]string{"not/a/job"}, 2, "printjob: not/a/job: no such file, and not a job id\n" + usageText},
		{[]string{"-d", home, "99.vm"}, 1, "printjob: 99.vm: no such job\n"},
		{[]string{garbage}, 1, "printjob: " + garbage + ": not a TORQUE job file"},
	} {
		status, stdout, stderr := runPrintjob(tc.args...)
		if status != tc.status || stdout != "" || !strings.HasPrefix(stderr, tc.stderr) {
			t.Errorf("%q: status %d, stdout %q, stderr %q", tc.args, status, stdout, stderr)
		}
	}
}

func FuzzParseServerJob(f *testing.F) {
	f.Add(serverRecord(1, 10, "batch", [][3]string{{"Job_Name", "", "x"}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if j, err := state.DecodeJobRecord("1.x", b); err == nil {
			printServerJob(io.Discard, j, false)
		}
	})
}
