package main

import (
	"strings"
	"testing"
)

// FuzzDirectives checks that no script makes the directive scanner or the
// word splitter panic, and that there are no more directives than lines
// holding the prefix.
func FuzzDirectives(f *testing.F) {
	f.Add("#!/bin/sh\n#PBS -N a\n  #PBS -l walltime=1 \\\n -m n\necho\n#PBS -N b\n", "#PBS")
	f.Add("#PBS -N \"a b\" # c\n", "#PBS")
	f.Add("#X -q 'x\n", "#X")
	f.Fuzz(func(t *testing.T, script, prefix string) {
		if prefix == "" {
			return
		}
		ds := directives([]byte(script), prefix)
		if n := strings.Count(script, prefix); len(ds) > n {
			t.Fatalf("%d directives from %d prefixes", len(ds), n)
		}
		for _, d := range ds {
			_, _ = splitWords(d)
		}
	})
}
