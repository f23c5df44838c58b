package attr

import (
	"fmt"
	"testing"
)

func TestParseResourceRequests(t *testing.T) {
	tests := []struct {
		in   string
		want string
		code int
	}{
		// capture 28
		{"walltime=00:05:00,nodes=1:ppn=1,mem=100mb", "[{walltime 00:05:00} {nodes 1:ppn=1} {mem 100mb}]", 0},
		// capture 106
		{"nodes=vm:ppn=1+vm2:ppn=1", "[{nodes vm:ppn=1+vm2:ppn=1}]", 0},
		{"walltime=01:00:00", "[{walltime 01:00:00}]", 0},
		{"mem=20mb", "[{mem 20mb}]", 0},
		{"other='a,b',arch=x86", "[{other a,b} {arch x86}]", 0},
		{`other="x y",ncpus=2`, "[{other x y} {ncpus 2}]", 0},
		{"walltime=1:00:00-2:00:00", "[{minwclimit 1:00:00} {walltime 2:00:00}]", 0},
		{"nodes=2:ppn=2:procs=4", "[{nodes 2:ppn=2} {procs 4}]", 0},
		{"naccesspolicy", "[{naccesspolicy }]", 0},
		{"a=1,", "[{a 1}]", 0},
		{"=1", "", pbseBadAtVal},
		{"other='abc", "", pbseBadAtVal},
		{"other='a'b", "", pbseBadAtVal},
	}
	for _, tt := range tests {
		got, err := ParseResourceRequests(tt.in)
		if Code(err) != tt.code {
			t.Errorf("ParseResourceRequests(%q) error %v, want code %d", tt.in, err, tt.code)
			continue
		}
		if err == nil && fmt.Sprint(got) != tt.want {
			t.Errorf("ParseResourceRequests(%q) = %v, want %s", tt.in, got, tt.want)
		}
	}
}
