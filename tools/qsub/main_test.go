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
