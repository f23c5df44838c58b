package main

import (
	"reflect"
	"testing"

	"gopbs/pbs/cli"
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

// TestReserveOption: GoPBS's -R y|n sends the reserve attribute, as -W
// reserve=y|n does with TORQUE's qsub; other values are refused.
func TestReserveOption(t *testing.T) {
	q := &qsub{}
	for _, v := range []string{"y", "n"} {
		got, err := q.option(cli.Opt{C: 'R', Arg: v}, false)
		if err != nil || len(got) != 1 || got[0].Name != "reserve" || got[0].Value != v {
			t.Errorf("-R %s: %v %v", v, got, err)
		}
		w, err := cli.WAttrs("reserve=" + v)
		if err != nil || len(w) != 1 || w[0] != got[0] {
			t.Errorf("-W reserve=%s: %v %v", v, w, err)
		}
	}
	if _, err := q.option(cli.Opt{C: 'R', Arg: "yes"}, false); err == nil {
		t.Error("-R yes accepted")
	}
}
