package attr

import (
	"testing"
)

func mustParse(t *testing.T, ty Type, s string) Value {
	t.Helper()
	v, err := Parse(ty, s)
	if err != nil {
		t.Fatalf("Parse(%v, %q): %v", ty, s, err)
	}
	return v
}

func TestCombine(t *testing.T) {
	tests := []struct {
		typ          Type
		old, operand string
		op           Op
		want         string
	}{
		{TypeLong, "5", "3", OpSet, "3"},
		{TypeLong, "5", "3", OpIncr, "8"},
		{TypeLong, "5", "3", OpIncrOld, "8"},
		{TypeLong, "5", "3", OpDecr, "2"},
		{TypeLong, "", "3", OpDecr, "-3"},
		{TypeLong, "5", "3", OpUnset, ""},
		{TypeLong, "5", "3", OpEQ, "3"},
		{TypeLong, "5", "3", OpMerge, "3"},
		{TypeTime, "01:00:00", "30:00", OpIncr, "01:30:00"},
		{TypeTime, "01:00:00", "30:00", OpDecr, "00:30:00"},
		{TypeSize, "1gb", "512mb", OpIncr, "1536mb"},
		{TypeSize, "1gb", "512mb", OpDecr, "512mb"},
		{TypeSize, "512mb", "1gb", OpDecr, "0mb"},
		{TypeSize, "", "20kb", OpIncr, "20kb"},
		{TypeSize, "2w", "8b", OpIncr, "16b"},
		{TypeBool, "False", "True", OpIncr, "True"},
		{TypeBool, "True", "True", OpDecr, "False"},
		{TypeHold, "u", "o", OpIncr, "ou"},
		{TypeHold, "sou", "o", OpDecr, "su"},
		{TypeHold, "u", "u", OpDecr, "n"},
		{TypeNodeState, "free", "offline", OpIncr, "offline"},
		{TypeNodeState, "down,offline", "offline", OpDecr, "down"},
		{TypeNodeState, "offline", "offline", OpDecr, "free"},
		{TypeString, "ab", "cd", OpIncr, "abcd"},
		{TypeStringArray, "a,b", "b,c", OpIncr, "a,b,c"},
		{TypeStringArray, "a,b,c", "b", OpDecr, "a,c"},
		{TypeStringArray, "a", "a", OpDecr, ""},
		{TypeACL, "root@vm", "bob@*", OpIncrOld, "root@vm,bob@*"},
		{TypeACL, "root@vm,bob@*", "root@vm", OpDecr, "bob@*"},
		{TypeStringArray, "a,b", "x", OpSet, "x"},
		{TypeDepend, "afterok:1.vm@vm", "afterany:2.vm@vm", OpIncr, "afterany:2.vm@vm"},
	}
	for _, tt := range tests {
		var old Value
		if tt.old != "" {
			old = mustParse(t, tt.typ, tt.old)
		}
		operand := mustParse(t, tt.typ, tt.operand)
		got, err := Combine(old, operand, tt.op)
		if err != nil {
			t.Errorf("Combine(%q, %q, %d): %v", tt.old, tt.operand, tt.op, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("Combine(%v %q, %q, %d) = %q, want %q", tt.typ, tt.old, tt.operand, tt.op, got.String(), tt.want)
		}
	}
	if _, err := Combine(LongValue(1), BoolValue(true), OpIncr); Code(err) != pbseAttrType {
		t.Errorf("mismatched types: %v", err)
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		typ     Type
		a, b    string
		want    int
		ordered bool
	}{
		{TypeLong, "5", "10", -1, true},
		{TypeLong, "10", "10", 0, true},
		{TypeTime, "01:00:00", "00:10:00", 1, true},
		{TypeTime, "3600", "1:00:00", 0, true},
		{TypeSize, "1gb", "1024mb", 0, true},
		{TypeSize, "1kb", "1000b", 1, true},
		{TypeSize, "1kw", "4kb", 0, true},
		{TypeSize, "1kw", "5kb", -1, true},
		{TypeSize, "9999999pb", "1b", 1, true},
		{TypeString, "abc", "abd", -1, true},
		{TypeBool, "True", "True", 0, false},
		{TypeBool, "True", "False", 1, false},
		{TypeStringArray, "a,b,c", "c,a", 0, false},
		{TypeStringArray, "a,b", "d", 1, false},
		{TypeHold, "u", "u", 0, false},
	}
	for _, tt := range tests {
		c, ok := Compare(mustParse(t, tt.typ, tt.a), mustParse(t, tt.typ, tt.b))
		if c != tt.want || ok != tt.ordered {
			t.Errorf("Compare(%v %q, %q) = %d, %v; want %d, %v", tt.typ, tt.a, tt.b, c, ok, tt.want, tt.ordered)
		}
	}
	if _, ok := Compare(LongValue(1), TimeValue(1)); ok {
		t.Error("values of different types compared as ordered")
	}
	w1, w2 := mustParse(t, TypeTime, "01:00:00"), mustParse(t, TypeTime, "00:30:00")
	for op, want := range map[Op]bool{OpEQ: false, OpNE: true, OpGE: true, OpGT: true, OpLE: false, OpLT: false, OpSet: false} {
		if got := Matches(w1, op, w2); got != want {
			t.Errorf("01:00:00 op %d 00:30:00 = %v, want %v", op, got, want)
		}
	}
	b1, b2 := BoolValue(true), BoolValue(false)
	if Matches(b1, OpGT, b2) || !Matches(b1, OpNE, b2) || Matches(b1, OpEQ, b2) {
		t.Error("boolean relations wrong")
	}
}

func TestACL(t *testing.T) {
	users := mustParse(t, TypeACL, "root@vm,alice,bob@*.example.com,carol@node*")
	tests := []struct {
		user, host string
		want       bool
	}{
		{"root", "vm", true},
		{"root", "VM", true},
		{"root", "vm2", false},
		{"alice", "anywhere", true},
		{"bob", "n1.example.com", true},
		{"bob", "example.com", false},
		{"carol", "node12", true},
		{"carol", "xnode12", false},
		{"dave", "vm", false},
	}
	for _, tt := range tests {
		if got := MatchUser(users, tt.user, tt.host); got != tt.want {
			t.Errorf("MatchUser(%s@%s) = %v, want %v", tt.user, tt.host, got, tt.want)
		}
	}
	hosts := mustParse(t, TypeACL, "vm,*.cluster.org,*")
	if !MatchHost(hosts, "anything") {
		t.Error("* does not match")
	}
	hosts = mustParse(t, TypeACL, "vm,*.cluster.org")
	for h, want := range map[string]bool{"vm": true, "VM": true, "n1.cluster.org": true, "cluster.org": false, "vm2": false} {
		if got := MatchHost(hosts, h); got != want {
			t.Errorf("MatchHost(%s) = %v, want %v", h, got, want)
		}
	}
	for _, tt := range []struct {
		entry, host string
		want        bool
	}{
		{"*", "", true}, {"*", "vm", true}, {"vm", "VM", true}, {"*.org", "a.org", true}, {"*.org", "org", false},
		{"n*e", "node", true}, {"n*e", "nod", false}, {"a*b*c", "aXbYc", true}, {"a*b*c", "acb", false}, {"", "", true}, {"", "vm", false},
	} {
		if got := MatchHostEntry(tt.entry, tt.host); got != tt.want {
			t.Errorf("MatchHostEntry(%q, %q) = %v, want %v", tt.entry, tt.host, got, tt.want)
		}
	}
	for _, tt := range []struct {
		entry, user, host string
		want              bool
	}{
		{"root", "root", "any", true}, {"root@vm", "root", "vm", true}, {"root@vm", "root", "vm2", false},
		{"*@vm", "bob", "vm", true}, {"*", "bob", "x", true}, {"bob@*.org", "bob", "n.org", true}, {"bob", "rob", "vm", false},
	} {
		if got := MatchUserEntry(tt.entry, tt.user, tt.host); got != tt.want {
			t.Errorf("MatchUserEntry(%q, %q, %q) = %v, want %v", tt.entry, tt.user, tt.host, got, tt.want)
		}
	}
	groups := mustParse(t, TypeACL, "staff,wheel")
	if !MatchGroup(groups, "wheel") || MatchGroup(groups, "users") {
		t.Error("MatchGroup wrong")
	}
	if !users.Contains("alice") || users.Contains("bob") || users.Len() != 4 {
		t.Error("Contains/Len wrong")
	}
}

func TestSizeArithmetic(t *testing.T) {
	a, _ := ParseSize("3kb")
	b, _ := ParseSize("1mb")
	if got := a.Add(b).String(); got != "1027kb" {
		t.Errorf("3kb+1mb = %s", got)
	}
	if got := b.Sub(a).String(); got != "1021kb" {
		t.Errorf("1mb-3kb = %s", got)
	}
	if got := b.Bytes(); got != 1<<20 {
		t.Errorf("1mb = %d bytes", got)
	}
	w, _ := ParseSize("2w")
	if got := w.Bytes(); got != 2*WordSize {
		t.Errorf("2w = %d bytes", got)
	}
	huge := Size{Num: 1 << 62, Shift: 50}
	if huge.Bytes() != ^uint64(0) {
		t.Error("huge size does not saturate")
	}
}

func TestDependStructure(t *testing.T) {
	deps, err := ParseDepend("afterok:1.vm:2.vm@other,on:3,beforeany:5.vm")
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 3 || deps[0].Type != DependAfterOK || len(deps[0].Jobs) != 2 || deps[1].Count != 3 || !deps[2].Type.IsBefore() {
		t.Fatalf("unexpected %+v", deps)
	}
	SetDefaultServer(deps, "vm")
	if got, want := FormatDepend(deps), "afterok:1.vm@vm:2.vm@other,on:3,beforeany:5.vm@vm"; got != want {
		t.Errorf("FormatDepend = %q, want %q", got, want)
	}
	if v := DependValue(deps); v.String() != "afterok:1.vm@vm:2.vm@other,on:3,beforeany:5.vm@vm" {
		t.Errorf("DependValue = %q", v)
	}
	for _, name := range dependNames {
		ty, ok := LookupDependType(name)
		if !ok || ty.String() != name {
			t.Errorf("LookupDependType(%q) = %v, %v", name, ty, ok)
		}
	}
	if !DependAfterOKArray.IsArray() || DependAfterOK.IsArray() || !DependSyncCount.IsCount() || !DependAfterAny.IsAfter() {
		t.Error("type predicates wrong")
	}
}

func TestDependMirror(t *testing.T) {
	pairs := map[string]string{
		"after": "before", "afterok": "beforeok", "afternotok": "beforenotok", "afterany": "beforeany",
		"afterstartarray": "beforestartarray", "afterokarray": "beforeokarray",
		"afternotokarray": "beforenotokarray", "afteranyarray": "beforeanyarray",
	}
	for a, b := range pairs {
		ta, _ := LookupDependType(a)
		tb, _ := LookupDependType(b)
		if m, ok := ta.Mirror(); !ok || m != tb {
			t.Errorf("%v.Mirror() = %v, %v; want %v", ta, m, ok, tb)
		}
		if m, ok := tb.Mirror(); !ok || m != ta {
			t.Errorf("%v.Mirror() = %v, %v; want %v", tb, m, ok, ta)
		}
	}
	for _, ty := range []DependType{DependOn, DependSyncWith, DependSyncCount, numDependTypes} {
		if _, ok := ty.Mirror(); ok {
			t.Errorf("%v has a mirror", ty)
		}
	}
}

func TestNodeSpec(t *testing.T) {
	spec, err := ParseNodeSpec("2:bigmem:ppn=4+node01:gpus=2#shared#ib")
	if err != nil {
		t.Fatal(err)
	}
	if spec.NodeCount() != 3 || spec.ProcCount() != 9 || !spec.Shared() {
		t.Errorf("counts %d/%d shared %v", spec.NodeCount(), spec.ProcCount(), spec.Shared())
	}
	e := spec.Elements
	if e[0].Count != 2 || e[0].PPN != 4 || e[0].Properties[0] != "bigmem" || e[1].Name != "node01" || e[1].GPUs != 2 || spec.Globals[1] != "ib" {
		t.Errorf("unexpected %+v", spec)
	}
	if s, _ := ParseNodeSpec("vm:procs=3"); s.ProcCount() != 3 {
		t.Error("procs= inside an element is not a ppn alias")
	}
}

func TestModifyTypeMismatch(t *testing.T) {
	s := NewSet(JobTable())
	if err := s.Modify(JobPriority, nil, BoolValue(true), OpSet); Code(err) != pbseAttrType {
		t.Errorf("bool into Priority: %v", err)
	}
	if err := s.Modify(JobMailUsers, nil, mustParse(t, TypeACL, "a@b"), OpSet); err != nil {
		t.Errorf("ACL into string array: %v", err)
	}
	rd, _ := DefaultResources().Lookup("walltime")
	if err := s.Modify(JobResourceList, rd, LongValue(5), OpSet); Code(err) != pbseAttrType {
		t.Errorf("long into walltime: %v", err)
	}
}
