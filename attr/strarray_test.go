package attr

import (
	"slices"
	"testing"
)

func TestSplitJoinArray(t *testing.T) {
	tests := []struct {
		text  string
		elems []string
		join  string
	}{
		{"", nil, ""},
		{"a", []string{"a"}, "a"},
		{"a, b ,c\\,d,", []string{"a", "b", "c,d"}, "a,b,c\\,d"},
		{"x\ny\n", []string{"x", "y"}, "x,y"},
		{" , ,", nil, ""},
		{`p\"q,r\'s,t\\u`, []string{`p"q`, "r's", `t\u`}, `p\"q,r\'s,t\\u`},
		{`a\ ,b`, []string{"a ", "b"}, "a ,b"},
		{"root@vm,*@*.example.com", []string{"root@vm", "*@*.example.com"}, "root@vm,*@*.example.com"},
	}
	for _, tt := range tests {
		got := SplitArray(tt.text)
		if !slices.Equal(got, tt.elems) {
			t.Errorf("SplitArray(%q) = %q, want %q", tt.text, got, tt.elems)
		}
		if j := JoinArray(got); j != tt.join {
			t.Errorf("JoinArray(%q) = %q, want %q", got, j, tt.join)
		}
		if back := SplitArray(JoinArray(got)); !slices.Equal(back, got) && tt.text != `a\ ,b` {
			t.Errorf("SplitArray(JoinArray(%q)) = %q", got, back)
		}
		v, err := Parse(TypeStringArray, tt.text)
		if err != nil || v.Str() != tt.join {
			t.Errorf("Parse(%q).Str() = %q, %v; want %q", tt.text, v.Str(), err, tt.join)
		}
	}
}
