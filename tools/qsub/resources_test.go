package main

import (
	"reflect"
	"testing"

	"gopbs/pbs/cli"
)

func TestExpandResources(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"walltime=01:00:00", []string{"walltime=01:00:00"}},
		{"walltime=00:30:00-02:00:00,mem=1gb", []string{"minwclimit=00:30:00", "walltime=02:00:00", "mem=1gb"}},
		{"walltime=-1", []string{"walltime=-1"}},
		{"nodes=2:ppn=2:procs=4", []string{"nodes=2:ppn=2", "procs=4"}},
		{"nodes=1:procs=3+2:ppn=1", []string{"nodes=1+2:ppn=1", "procs=3"}},
		{"nodes=1:procs=x", []string{"nodes=1:procs=x"}},
		{"nodes=1:procs=2x:procs=5", []string{"nodes=1:procs=2x", "procs=5"}},
		{"nodes=node1:ppn=2", []string{"nodes=node1:ppn=2"}},
	}
	for _, tt := range tests {
		var got []string
		for _, r := range expandResources(cli.ResourceList(tt.in)) {
			got = append(got, r.Resource+"="+r.Value)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}
