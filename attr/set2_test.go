package attr

import (
	"errors"
	"slices"
	"testing"
)

func TestTables(t *testing.T) {
	for _, tt := range []struct {
		tab   *Table
		n     int
		first string
		last  string
	}{
		{JobTable(), 73, "Job_Name", "estimated_exec_host"},
		{QueueTable(), 46, "queue_type", "partition"},
		{ServerTable(), 86, "server_state", "http_address"},
		{NodeTable(), 11, "state", "queue"},
	} {
		if tt.tab.Len() != tt.n || tt.tab.Def(0).Name != tt.first || tt.tab.Def(tt.n-1).Name != tt.last {
			t.Errorf("%s table: %d defs, %s…%s", tt.tab.Object, tt.tab.Len(), tt.tab.Def(0).Name, tt.tab.Def(tt.tab.Len()-1).Name)
		}
		seen := map[string]bool{}
		for i, d := range tt.tab.Defs() {
			if d.Index() != i || d.Name == "" || d.Type == TypeNone || seen[d.Name] {
				t.Errorf("%s def %d %+v", tt.tab.Object, i, d)
			}
			seen[d.Name] = true
			if got, ok := tt.tab.Lookup(d.Name); !ok || got.Index() != i {
				t.Errorf("Lookup(%q) failed", d.Name)
			}
			if d.Default != "" {
				if _, err := Parse(d.Type, d.Default); err != nil {
					t.Errorf("%s default %q: %v", d.Name, d.Default, err)
				}
			}
			if d.Unset != "" {
				if _, err := Parse(d.Type, d.Unset); err != nil {
					t.Errorf("%s unset value %q: %v", d.Name, d.Unset, err)
				}
			}
		}
	}
	if d, ok := JobTable().Lookup("job_name"); !ok || d.Name != "Job_Name" {
		t.Error("case-insensitive lookup failed")
	}
	if JobTable().Index("RESOURCE_LIST") != JobResourceList || JobTable().Index("nosuch") != -1 {
		t.Error("Index wrong")
	}
	if d, ok := DefaultResources().Lookup("WallTime"); !ok || d.Name != "walltime" || d.Type != TypeTime {
		t.Error("resource lookup failed")
	}
	// The spec table order is checked against the captures elsewhere;
	// spot-check the constants.
	for i, name := range map[int]string{JobState: "job_state", JobVariableList: "Variable_List", JobSubmitHost: "submit_host",
		JobID: "job_id", JobArguments: "job_arguments"} {
		if JobTable().Def(i).Name != name {
			t.Errorf("job def %d = %s, want %s", i, JobTable().Def(i).Name, name)
		}
	}
	for i, name := range map[int]string{QueueEnabled: "enabled", QueueResourcesAssigned: "resources_assigned", QueueMtime: "mtime"} {
		if QueueTable().Def(i).Name != name {
			t.Errorf("queue def %d = %s, want %s", i, QueueTable().Def(i).Name, name)
		}
	}
	for i, name := range map[int]string{SrvNextJobNumber: "next_job_number", SrvPBSVersion: "pbs_version", SrvMoabArrayCompatible: "moab_array_compatible"} {
		if ServerTable().Def(i).Name != name {
			t.Errorf("server def %d = %s, want %s", i, ServerTable().Def(i).Name, name)
		}
	}
}

func TestPermissions(t *testing.T) {
	job := JobTable()
	user, oper, mgr, priv := AccessUser, AccessUser|AccessOper, AccessUser|AccessOper|AccessMgr, AccessPrivileged
	tests := []struct {
		name                   string
		read, write            [4]bool // user, operator, manager, privileged
		submitUser, submitPriv bool
	}{
		{"Job_Name", [4]bool{true, true, true, true}, [4]bool{true, true, true, true}, true, true},
		{"Job_Owner", [4]bool{true, true, true, true}, [4]bool{false, false, false, true}, false, true},
		{"substate", [4]bool{false, true, true, true}, [4]bool{}, false, false},
		{"euser", [4]bool{false, false, true, true}, [4]bool{}, false, false},
		{"hop_count", [4]bool{}, [4]bool{false, false, false, true}, false, true},
		{"exec_host", [4]bool{true, true, true, true}, [4]bool{false, true, true, true}, false, true},
		{"submit_args", [4]bool{true, true, true, true}, [4]bool{}, true, true},
		{"forward_x11", [4]bool{false, false, true, true}, [4]bool{true, true, true, true}, true, true},
	}
	for _, tt := range tests {
		d, _ := job.Lookup(tt.name)
		for k, a := range []Access{user, oper, mgr, priv} {
			if d.Readable(a) != tt.read[k] || d.Writable(a) != tt.write[k] {
				t.Errorf("%s access %b: read %v write %v", tt.name, a, d.Readable(a), d.Writable(a))
			}
			if d.Perm.Readable(a) != tt.read[k] || d.Perm.Writable(a) != tt.write[k] {
				t.Errorf("%s access %b: Perm read %v write %v", tt.name, a, d.Perm.Readable(a), d.Perm.Writable(a))
			}
		}
		if d.SubmitSettable(user) != tt.submitUser || d.SubmitSettable(priv) != tt.submitPriv {
			t.Errorf("%s: submit settable %v/%v", tt.name, d.SubmitSettable(user), d.SubmitSettable(priv))
		}
	}
	d, _ := job.Lookup("Job_Name")
	if d.SelectOpAllowed(OpGT) || !d.SelectOpAllowed(OpNE) {
		t.Error("SELEQ not honoured")
	}
	d, _ = job.Lookup("Priority")
	if !d.SelectOpAllowed(OpGT) {
		t.Error("Priority must allow GT")
	}
	nd, _ := DefaultResources().Lookup("neednodes")
	if nd.Readable(user) || !nd.Readable(mgr) || !nd.Readable(priv) {
		t.Error("neednodes permissions wrong")
	}
}

func TestDecodeErrors(t *testing.T) {
	q := NewSet(QueueTable())
	if err := q.Decode("nosuch", "", false, "1"); Code(err) != pbseNoAttr {
		t.Errorf("unknown queue attribute: %v", err)
	}
	if err := q.Decode("resources_max", "bogus", true, "1"); Code(err) != pbseUnkResc {
		t.Errorf("unknown resource: %v", err)
	}
	err := q.Decode("resources_max", "walltime", true, "1h")
	if Code(err) != pbseBadAtVal {
		t.Errorf("bad walltime: %v", err)
	}
	if e, ok := err.(*Error); !ok || e.Name != "resources_max" || e.Resource != "walltime" {
		t.Errorf("error does not name the attribute: %#v", err)
	}
	if err := q.ModifyText("max_running", "", "x", OpSet); Code(err) != pbseBadAtVal {
		t.Errorf("bad long: %v", err)
	}
	j := NewSet(JobTable())
	if err := j.Decode("synccount", "", false, "1"); err != nil {
		t.Errorf("unknown job attribute not kept: %v", err)
	}
	if err := j.Decode("Resource_List", "bogusres", true, "5"); err != nil {
		t.Errorf("unknown job resource not kept: %v", err)
	}
	if got := j.UnknownResources("Resource_List"); !slices.Equal(got, []string{"bogusres"}) {
		t.Errorf("UnknownResources = %v", got)
	}
	if len(j.Others()) != 2 {
		t.Errorf("Others = %v", j.Others())
	}
	entries := j.Status(AccessUser, true)
	if len(entries) != 2 || entries[0].Name != "synccount" || entries[1].Resource != "bogusres" {
		t.Errorf("unknown attributes reported as %v", entries)
	}
	if err := j.ModifyText("nosuch", "", "1", OpSet); Code(err) != pbseNoAttr {
		t.Errorf("ModifyText unknown: %v", err)
	}
}

func TestDecodeArrayAppends(t *testing.T) {
	s := NewSet(JobTable())
	_ = s.Decode("stagein", "", false, "a@h:/x")
	_ = s.Decode("stagein", "", false, "b@h:/y")
	if got := s.Get(JobStagein).String(); got != "a@h:/x,b@h:/y" {
		t.Errorf("stagein = %q", got)
	}
	_ = s.Decode("Job_Name", "", false, "one")
	_ = s.Decode("Job_Name", "", false, "two")
	if got := s.Get(JobName).String(); got != "two" {
		t.Errorf("Job_Name = %q", got)
	}
	// An empty value unsets.
	_ = s.Decode("Job_Name", "", false, "")
	if s.Has(JobName) {
		t.Error("empty value did not unset")
	}
}

func TestModifyResources(t *testing.T) {
	s := NewSet(QueueTable())
	for _, kv := range [][3]string{{"resources_max", "walltime", "00:10:00"}, {"resources_default", "walltime", "00:05:00"}, {"resources_max", "mem", "1gb"}} {
		if err := s.ModifyText(kv[0], kv[1], kv[2], OpSet); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ModifyText("resources_max", "walltime", "00:05:00", OpIncr); err != nil {
		t.Fatal(err)
	}
	if got := s.ResourceByName(QueueResourcesMax, "walltime").String(); got != "00:15:00" {
		t.Errorf("walltime = %s", got)
	}
	var names []string
	for _, e := range s.Status(AccessUser, false) {
		names = append(names, e.Name+"."+e.Resource+"="+e.Value)
	}
	want := []string{"resources_max.mem=1gb", "resources_max.walltime=00:15:00", "resources_default.walltime=00:05:00"}
	if !slices.Equal(names, want) {
		t.Errorf("status %v, want %v", names, want)
	}
	if err := s.ModifyText("resources_max", "mem", "", OpUnset); err != nil {
		t.Fatal(err)
	}
	if s.ResourceByName(QueueResourcesMax, "mem").IsSet() {
		t.Error("UNSET did not remove the resource")
	}
	if err := s.ModifyText("resources_default", "", "", OpUnset); err != nil || s.Has(QueueResourcesDefault) {
		t.Errorf("UNSET of the whole list: %v", err)
	}
}

func TestDefaultsAndLimits(t *testing.T) {
	queue := NewSet(QueueTable())
	_ = queue.ModifyText("resources_default", "nodes", "1", OpSet)
	_ = queue.ModifyText("resources_default", "walltime", "01:00:00", OpSet)
	_ = queue.ModifyText("resources_max", "walltime", "00:10:00", OpSet)
	_ = queue.ModifyText("resources_min", "mem", "10mb", OpSet)
	job := NewSet(JobTable())
	_ = job.Decode("Resource_List", "walltime", true, "00:05:00")
	if n := job.FillDefaults(JobResourceList, queue, QueueResourcesDefault); n != 1 {
		t.Errorf("FillDefaults added %d", n)
	}
	nodes := job.ResourceByName(JobResourceList, "nodes")
	if nodes.String() != "1" || nodes.Flags()&FlagDefault == 0 {
		t.Errorf("nodes = %v flags %x", nodes, nodes.Flags())
	}
	if job.ResourceByName(JobResourceList, "nodect").Int() != 1 || job.ResourceByName(JobResourceList, "neednodes").String() != "1" {
		t.Error("defaulted nodes did not derive nodect/neednodes")
	}
	if job.ResourceByName(JobResourceList, "walltime").String() != "00:05:00" {
		t.Error("default overrode the job's walltime")
	}
	// Saving skips defaulted resources.
	var saved []string
	for _, e := range job.AppendEntries(nil, &EncodeOptions{Mode: ModeSave, All: true, SkipDefault: true}) {
		saved = append(saved, e.Resource)
	}
	if !slices.Equal(saved, []string{"neednodes", "nodect", "walltime"}) {
		t.Errorf("saved resources %v", saved)
	}
	if rd, bad := job.ExceedsLimit(JobResourceList, queue, QueueResourcesMax, true); bad {
		t.Errorf("within max reported as exceeding %s", rd.Name)
	}
	_ = job.ModifyText("Resource_List", "walltime", "01:00:00", OpSet)
	if rd, bad := job.ExceedsLimit(JobResourceList, queue, QueueResourcesMax, true); !bad || rd.Name != "walltime" {
		t.Error("walltime over max not detected")
	}
	if _, bad := job.ExceedsLimit(JobResourceList, queue, QueueResourcesMin, false); bad {
		t.Error("min check on an unset resource failed")
	}
	_ = job.ModifyText("Resource_List", "mem", "5mb", OpSet)
	if rd, bad := job.ExceedsLimit(JobResourceList, queue, QueueResourcesMin, false); !bad || rd.Name != "mem" {
		t.Error("mem under min not detected")
	}
	job.RemoveDefaults(JobResourceList)
	if job.ResourceByName(JobResourceList, "nodes").IsSet() {
		t.Error("RemoveDefaults kept nodes")
	}

	// resources_assigned bookkeeping.
	srv := NewSet(ServerTable())
	_ = job.ModifyText("Resource_List", "nodes", "2:ppn=2", OpSet)
	srv.AddSummed(SrvResourcesAssigned, job, JobResourceList, OpIncr)
	srv.AddSummed(SrvResourcesAssigned, job, JobResourceList, OpIncr)
	if got := srv.ResourceByName(SrvResourcesAssigned, "nodect").String(); got != "4" {
		t.Errorf("assigned nodect = %s", got)
	}
	if got := srv.ResourceByName(SrvResourcesAssigned, "mem").String(); got != "10mb" {
		t.Errorf("assigned mem = %s", got)
	}
	srv.AddSummed(SrvResourcesAssigned, job, JobResourceList, OpDecr)
	srv.AddSummed(SrvResourcesAssigned, job, JobResourceList, OpDecr)
	if got := srv.ResourceByName(SrvResourcesAssigned, "nodect").String(); got != "0" {
		t.Errorf("assigned nodect after release = %s", got)
	}
	if srv.ResourceByName(SrvResourcesAssigned, "walltime").IsSet() {
		t.Error("walltime summed")
	}
}

func TestCloneEqualFlags(t *testing.T) {
	s := typicalJob(t, 7)
	c := s.Clone()
	if !s.Equal(c) || !c.Equal(s) {
		t.Fatal("clone differs")
	}
	c.Put(JobPriority, LongValue(5))
	if s.Equal(c) || s.Get(JobPriority).Int() != 0 {
		t.Error("clone shares storage")
	}
	if !s.Modified() {
		t.Error("new set not modified")
	}
	s.ClearModify()
	if s.Modified() {
		t.Error("ClearModify left flags")
	}
	s.Put(JobComment, StringValue("x"))
	if !s.Modified() || s.Get(JobComment).Flags()&FlagModify == 0 {
		t.Error("Put did not mark modified")
	}
	s.Unset(JobComment)
	if s.Has(JobComment) {
		t.Error("Unset failed")
	}
	// The presence mask handles indices in the second word.
	srv := NewSet(ServerTable())
	srv.Put(SrvNoMailForce, BoolValue(true))
	srv.Put(SrvScheduling, BoolValue(false))
	srv.Put(SrvMaxSlotLimit, LongValue(3))
	if srv.Get(SrvNoMailForce).String() != "True" || srv.Get(SrvMaxSlotLimit).Int() != 3 || srv.Get(SrvScheduling).Bool() {
		t.Error("server set lost values")
	}
	var names []string
	for _, e := range srv.Status(AccessUser, false) {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, []string{"scheduling", "max_slot_limit", "no_mail_force"}) {
		t.Errorf("server status order %v", names)
	}
}

func TestNodeAlwaysReported(t *testing.T) {
	n := NewSet(NodeTable())
	n.Put(NodeNP, LongValue(2))
	var got []string
	for _, e := range n.Status(AccessUser, false) {
		got = append(got, e.Name+"="+e.Value)
	}
	if want := []string{"state=free", "np=2", "ntype=cluster", "gpus=0"}; !slices.Equal(got, want) {
		t.Errorf("node status %v, want %v", got, want)
	}
	_ = n.ModifyText("state", "", "offline", OpIncr)
	_ = n.ModifyText("state", "", "down", OpIncr)
	if got := n.Get(NodeStateAttr).String(); got != "down,offline" {
		t.Errorf("state = %s", got)
	}
	_ = n.ModifyText("state", "", "offline", OpDecr)
	if got := n.Get(NodeStateAttr).String(); got != "down" {
		t.Errorf("state = %s", got)
	}
	if err := n.ModifyText("state", "", "free,busy", OpSet); Code(err) != pbseMutualEx {
		t.Errorf("free,busy: %v", err)
	}
}

func TestWalltimeRemaining(t *testing.T) {
	s := typicalJob(t, 0) // start_time 1795310495, walltime 01:00:00, state R
	now := int64(1795310495 + 54)
	e, ok := s.WalltimeRemaining(now)
	if !ok || e.Value != "3546" || e.Name != "Walltime" || e.Resource != "Remaining" {
		t.Errorf("WalltimeRemaining = %+v, %v", e, ok)
	}
	if e, _ := s.WalltimeRemaining(1795310495 + 3601); e.Value != "18446744073709551615" {
		t.Errorf("overrun = %s", e.Value)
	}
	entries := s.AppendJobStatus(nil, AccessPrivileged, true, now)
	if len(entries) != len(capture58) {
		t.Fatalf("%d entries, want %d", len(entries), len(capture58))
	}
	for k, e := range entries {
		if e.Name == "Walltime" && capture58[k][0] != "Walltime" {
			t.Errorf("Walltime.Remaining at %d", k)
		}
	}
	s.Put(JobState, CharValue('S'))
	if _, ok := s.WalltimeRemaining(now); ok {
		t.Error("suspended job reports Walltime.Remaining")
	}
	// A restart sends session_id to the MOM.
	var names []string
	for _, e := range s.AppendMOM(nil) {
		names = append(names, e.Name)
	}
	if slices.Contains(names, "session_id") {
		t.Error("session_id sent without checkpoint_name")
	}
	s.Put(JobCheckpointName, StringValue("ckpt.1"))
	names = names[:0]
	for _, e := range s.AppendMOM(nil) {
		names = append(names, e.Name)
	}
	if !slices.Contains(names, "session_id") {
		t.Error("session_id not sent on restart")
	}
}

func TestDisallowedTypes(t *testing.T) {
	q := NewSet(QueueTable())
	if err := q.ModifyText("disallowed_types", "", "interactive,job_array", OpSet); err != nil {
		t.Fatal(err)
	}
	if err := q.ModifyText("disallowed_types", "", "batch", OpIncrOld); err != nil {
		t.Fatal(err)
	}
	if got := q.Get(QueueDisallowedTypes).String(); got != "interactive,job_array,batch" {
		t.Errorf("disallowed_types = %q", got)
	}
	if err := q.ModifyText("disallowed_types", "", "sometimes", OpIncr); Code(err) != pbseBadDisallowType {
		t.Errorf("bad type: %v", err)
	}
	if err := q.Decode("disallowed_types", "", false, "never"); Code(err) != pbseBadDisallowType {
		t.Errorf("bad type on decode: %v", err)
	}
}

func TestExceedsMax(t *testing.T) {
	queue := NewSet(QueueTable())
	_ = queue.ModifyText("resources_max", "walltime", "00:10:00", OpSet)
	srv := NewSet(ServerTable())
	_ = srv.ModifyText("resources_max", "walltime", "00:01:00", OpSet)
	_ = srv.ModifyText("resources_max", "mem", "1gb", OpSet)
	job := NewSet(JobTable())
	_ = job.Decode("Resource_List", "walltime", true, "00:05:00")
	_ = job.Decode("Resource_List", "mem", true, "512mb")
	if rd, bad := job.ExceedsMax(JobResourceList, queue, QueueResourcesMax, srv, SrvResourcesMax); bad {
		t.Errorf("queue limit should override the server's walltime, got %s", rd.Name)
	}
	_ = job.Decode("Resource_List", "mem", true, "2gb")
	if rd, bad := job.ExceedsMax(JobResourceList, queue, QueueResourcesMax, srv, SrvResourcesMax); !bad || rd.Name != "mem" {
		t.Error("server mem limit not applied")
	}
	if _, bad := job.ExceedsMax(JobResourceList, queue, QueueResourcesMax, nil, 0); bad {
		t.Error("nil server")
	}
}

func TestVariableListHelpers(t *testing.T) {
	vl := mustParse(t, TypeStringArray, "PBS_O_HOME=/home/alice,PBS_O_WORKDIR=/home/alice,X=a\\,b,FLAG")
	vl = PrependElements(vl, "PBS_O_QUEUE=batch", "PBS_O_HOST=vm")
	if got := vl.String(); got != `PBS_O_QUEUE=batch,PBS_O_HOST=vm,PBS_O_HOME=/home/alice,PBS_O_WORKDIR=/home/alice,X=a\,b,FLAG` {
		t.Errorf("Variable_List = %s", got)
	}
	for name, want := range map[string]string{"PBS_O_WORKDIR": "/home/alice", "X": "a,b", "FLAG": "", "PBS_O_QUEUE": "batch"} {
		if got, ok := VarLookup(vl, name); !ok || got != want {
			t.Errorf("VarLookup(%s) = %q, %v", name, got, ok)
		}
	}
	if _, ok := VarLookup(vl, "NOPE"); ok {
		t.Error("VarLookup found a missing variable")
	}
	if got := PrependElements(Value{}, "A=1").String(); got != "A=1" {
		t.Errorf("prepend to unset = %q", got)
	}
}

func TestAttrsIterator(t *testing.T) {
	s := NewSet(ServerTable())
	s.Put(SrvNoMailForce, BoolValue(true))
	s.Put(SrvScheduling, BoolValue(true))
	s.Put(SrvLogEvents, LongValue(511))
	var got []int
	for i, v := range s.Attrs() {
		if !v.IsSet() {
			t.Errorf("unset value for %d", i)
		}
		got = append(got, i)
		if len(got) == 2 {
			break
		}
	}
	if !slices.Equal(got, []int{SrvScheduling, SrvLogEvents}) {
		t.Errorf("Attrs = %v", got)
	}
}

func TestUnsetIgnoresValue(t *testing.T) {
	q := NewSet(QueueTable())
	_ = q.ModifyText("max_running", "", "5", OpSet)
	_ = q.ModifyText("resources_max", "walltime", "1:00:00", OpSet)
	if err := q.ModifyText("max_running", "", "garbage", OpUnset); err != nil || q.Has(QueueMaxRunning) {
		t.Errorf("unset max_running: %v", err)
	}
	if err := q.ModifyText("resources_max", "walltime", "garbage", OpUnset); err != nil || q.Has(QueueResourcesMax) {
		t.Errorf("unset resources_max.walltime: %v", err)
	}
}

// TestReserveAttribute: reserve takes y or n only (PBSE_BADATVAL
// otherwise) and is not reported when unset; the scheduler's plan
// attributes are written only by privileged connections.
func TestReserveAttribute(t *testing.T) {
	tab := JobTable()
	d, ok := tab.Lookup("reserve")
	if !ok || d.Index() != JobReserve || d.Unset != "n" {
		t.Fatalf("reserve: %+v %v", d, ok)
	}
	for _, v := range []string{"y", "n"} {
		val, err := Parse(d.Type, v)
		if err != nil || d.Check(val) != nil {
			t.Errorf("reserve=%s refused: %v %v", v, err, d.Check(val))
		}
	}
	for _, v := range []string{"yes", "Y", "true", "1", "x"} {
		val, _ := Parse(d.Type, v)
		err := d.Check(val)
		var e *Error
		if !errors.As(err, &e) || e.Code != pbseBadAtVal || e.Name != "reserve" {
			t.Errorf("reserve=%s: %v", v, err)
		}
	}
	s := NewSet(tab)
	if err := s.Decode("reserve", "", false, "maybe"); err == nil {
		t.Error("Decode accepted reserve=maybe")
	}
	if err := s.Decode("reserve", "", false, "y"); err != nil || s.Get(JobReserve).Str() != "y" {
		t.Errorf("Decode reserve=y: %v", err)
	}
	for _, name := range []string{"estimated_start_time", "estimated_exec_host"} {
		d, _ := tab.Lookup(name)
		if d.Writable(AccessUser|AccessOper|AccessMgr) || !d.Writable(AccessPrivileged) || !d.Readable(AccessUser) {
			t.Errorf("%s permissions %v", name, d.Perm)
		}
	}
}
