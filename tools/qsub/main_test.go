package main

import (
	"reflect"
	"testing"
)

func TestDirectives(t *testing.T) {
	script := "#!/bin/bash\n#PBS -N dirname\n  #PBS -l walltime=00:02:00 \\\n -m n\n# comment\n\n#PBS -j oe\necho hi\n#PBS -N ignored\n"
	got := directives([]byte(script), "#PBS")
	want := []string{"-N dirname", "-l walltime=00:02:00  -m n", "-j oe"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSplitWords(t *testing.T) {
	got, err := splitWords(`-N "a b" -l x=1 # comment`)
	if err != nil || !reflect.DeepEqual(got, []string{"-N", "a b", "-l", "x=1"}) {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := splitWords(`-N "open`); err == nil {
		t.Error("unmatched quote accepted")
	}
}

func TestWAttrs(t *testing.T) {
	t.Setenv("PBS_DEFAULT", "vm")
	tests := []struct {
		in   string
		want []string
	}{
		{"depend=afterok:1.vm", []string{"depend=afterok:1.vm"}},
		{"depend=afterok:12:13", []string{"depend=afterok:12.vm:13.vm"}},
		{"synccount=1", []string{"synccount=1"}},
		{"umask=022", []string{"umask=18"}},
		{"stagein=/tmp/a@vm:/home/a,/tmp/b@vm:/home/b", []string{"stagein=/tmp/a@vm:/home/a,/tmp/b@vm:/home/b"}},
		{"t=0-3,group_list=staff", []string{"job_array_request=0-3", "group_list=staff"}},
		{"fault_tolerant=yes", []string{"fault_tolerant=TRUE"}},
	}
	for _, tt := range tests {
		attrs, err := wAttrs(tt.in)
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
