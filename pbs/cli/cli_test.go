package cli

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopbs/pbs"
)

func TestGetopt(t *testing.T) {
	tests := []struct {
		args     string
		optstr   string
		opts     string // letter[=arg] separated by blanks
		operands string
		bad      bool
	}{
		{"-Qf", "fQ", "Q f", "", false},
		{"-u alice -a", "au:", "u=alice a", "", false},
		{"-ualice 2.vm", "au:", "u=alice", "2.vm", false},
		{"short -f 5.vm", "f", "f", "short 5.vm", false},
		{"-c list server", "+ac:", "c=list", "server", false},
		{"-z", "f", "?", "", true},
		{"-u", "u:", "?", "", true},
		{"-- -f", "f", "", "-f", false},
	}
	for _, tt := range tests {
		opts, ops, bad := Getopt(strings.Fields(tt.args), tt.optstr, "prog", io.Discard)
		var got []string
		for _, o := range opts {
			s := string(o.C)
			if o.Arg != "" {
				s += "=" + o.Arg
			}
			got = append(got, s)
		}
		if strings.Join(got, " ") != tt.opts || strings.Join(ops, " ") != tt.operands || bad != tt.bad {
			t.Errorf("%q: opts %q operands %q bad %v", tt.args, got, ops, bad)
		}
	}
}

func TestParseDateTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 1, 21, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want int64
	}{
		{"202611220321", 1795317660}, // capture 30
		{"0321", 1795317660},
		{"0100", time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC).Unix()},
		{"0321.30", 1795317690},
	}
	for _, tt := range tests {
		got, err := ParseDateTime(tt.in, now)
		if err != nil || got != tt.want {
			t.Errorf("%q: %d %v, want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "12", "2561", "ab12", "0321.3"} {
		if _, err := ParseDateTime(bad, now); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestResourceList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"walltime=00:05:00,nodes=1:ppn=1,mem=100mb",
			[]string{"Resource_List.walltime=00:05:00", "Resource_List.nodes=1:ppn=1", "Resource_List.mem=100mb"}},
		{`other="a,b",gres='x,y',arch`, []string{`Resource_List.other="a,b"`, "Resource_List.gres='x,y'", "Resource_List.arch="}},
		{"mem=1gb,,ncpus=2", []string{"Resource_List.mem=1gb", "Resource_List.ncpus=2"}},
		{`other="unterminated,x`, []string{`Resource_List.other="unterminated,x`}},
	}
	for _, tt := range tests {
		var names []string
		for _, a := range ResourceList(tt.in) {
			names = append(names, a.Name+"."+a.Resource+"="+a.Value)
		}
		if !reflect.DeepEqual(names, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.in, names, tt.want)
		}
	}
}

func TestHoldsUsage(t *testing.T) {
	called := false
	op := func(*pbs.Conn, string, string, string) error { called = true; return nil }
	for _, args := range [][]string{{"qhold"}, {"qhold", "-z", "1.vm"}, {"qhold", "-h"}} {
		if got := Holds("qhold", args, op); got != 2 {
			t.Errorf("Holds(%q) = %d, want 2", args, got)
		}
	}
	if called {
		t.Error("op called after a usage error")
	}
}

func TestRequestFailed(t *testing.T) {
	tests := []struct {
		err                error
		textSuffix, action string
		want               string
		code               int
	}{
		{&pbs.Error{Code: 15020, Text: "Unknown queue"}, " q9", "getting status of queue q9",
			"qstat: Unknown queue q9\n", 15020},
		{&pbs.Error{Code: 15033}, "", "submitting job",
			"qstat: Error (15033 - Batch protocol error) submitting job\n", 15033},
	}
	for _, tt := range tests {
		var b strings.Builder
		if code := RequestFailed(&b, "qstat", tt.err, tt.textSuffix, tt.action); code != tt.code || b.String() != tt.want {
			t.Errorf("RequestFailed(%v) = %d %q, want %d %q", tt.err, code, b.String(), tt.code, tt.want)
		}
	}
}

func TestWAttrs(t *testing.T) {
	t.Setenv("PBS_DEFAULT", "vm")
	// "vm" is the full name of the server whatever this machine calls
	// 127.0.0.1.
	aliases := filepath.Join(t.TempDir(), "aliases")
	if err := os.WriteFile(aliases, []byte("vm 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOSTALIASES", aliases)
	tests := []struct {
		in   string
		want []string
	}{
		{"depend=afterok:1.vm", []string{"depend=afterok:1.vm"}},
		{"depend=afterok:12:13", []string{"depend=afterok:12.vm:13.vm"}},
		{"depend=afterok:12.VM", []string{"depend=afterok:12.vm"}},
		{"depend=afterok:12@other:13", []string{"depend=afterok:12@other:13.vm"}},
		{"depend=afterokarray:5[]", []string{"depend=afterokarray:5[].vm"}},
		{"depend=afterok:12.bad..host", []string{"depend=afterok:12.bad..host"}},
		{"synccount=1", []string{"synccount=1"}},
		{"umask=022", []string{"umask=18"}},
		{"stagein=/tmp/a@vm:/home/a,/tmp/b@vm:/home/b", []string{"stagein=/tmp/a@vm:/home/a,/tmp/b@vm:/home/b"}},
		{"t=0-3,group_list=staff", []string{"job_array_request=0-3", "group_list=staff"}},
		{"fault_tolerant=yes", []string{"fault_tolerant=TRUE"}},
	}
	for _, tt := range tests {
		attrs, err := WAttrs(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		var got []string
		for _, a := range attrs {
			got = append(got, a.Name+"="+a.Value)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestVariableListFromV(t *testing.T) {
	t.Setenv("GOPBS_TEST_VAR", "from env, with comma")
	tests := []struct {
		in   string
		want []string
	}{
		{"A=1,B=x y", []string{"A=1", "B=x y"}},
		{`A="x,y",C=2`, []string{`A=\"x\,y\"`, "C=2"}},
		{"GOPBS_TEST_VAR,GOPBS_UNSET_VAR", []string{`GOPBS_TEST_VAR=from env\, with comma`}},
		{`D=back\slash`, []string{`D=back\\slash`}},
	}
	for _, tt := range tests {
		if got := VariableListFromV(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}
