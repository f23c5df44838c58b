package attr

import "strings"

// ResourceDef is the definition of one resource of the resource-list
// attributes (Resource_List, resources_used, resources_max, ...).
type ResourceDef struct {
	Name  string
	Type  Type
	Perm  Perm
	Flags Flag // FlagAltRun, FlagNoReport, FlagSummed, FlagNoMOM
	index int
}

// Index returns the resource's number in its Resources table.
func (d *ResourceDef) Index() int { return d.index }

// Readable reports whether a requester with access a may see the resource.
func (d *ResourceDef) Readable(a Access) bool { return readable(d.Perm, a) }

// Writable reports whether a requester with access a may set the resource.
func (d *ResourceDef) Writable(a Access) bool { return writable(d.Perm, a) }

// Resources is a resource definition table. It is immutable and safe for
// concurrent use.
type Resources struct {
	defs   []ResourceDef
	exact  map[string]int
	folded map[string]int
}

// Names of resources the server treats specially.
const (
	ResNodes     = "nodes"
	ResNeedNodes = "neednodes"
	ResNodeCt    = "nodect"
	ResProcCt    = "procct"
	ResProcs     = "procs"
	ResWalltime  = "walltime"
	ResCput      = "cput"
	ResMem       = "mem"
	ResVmem      = "vmem"
	ResNcpus     = "ncpus"
)

// defaultResources lists the resources known by default (spec 04 §9).
func defaultResourceDefs() []ResourceDef {
	const (
		rw     = ReadAll | WriteAll
		omW    = ReadAll | WriteOper | WriteMgr
		altrun = FlagAltRun
	)
	defs := []ResourceDef{
		{Name: "arch", Type: TypeString, Perm: rw},
		{Name: "cpupercent", Type: TypeLong, Perm: omW},
		{Name: "cput", Type: TypeTime, Perm: rw, Flags: altrun},
		{Name: "file", Type: TypeSize, Perm: rw},
		{Name: "mem", Type: TypeSize, Perm: rw, Flags: altrun | FlagSummed},
		{Name: "pmem", Type: TypeSize, Perm: rw, Flags: altrun},
		{Name: "ncpus", Type: TypeLong, Perm: rw, Flags: FlagSummed},
		{Name: "vmem", Type: TypeSize, Perm: rw, Flags: altrun | FlagSummed},
		{Name: "pvmem", Type: TypeSize, Perm: rw},
		{Name: "nice", Type: TypeLong, Perm: rw},
		{Name: "pcput", Type: TypeTime, Perm: rw},
		{Name: "walltime", Type: TypeTime, Perm: rw, Flags: altrun},
		{Name: "nodemask", Type: TypeLongLong, Perm: omW},
		{Name: "host", Type: TypeString, Perm: rw},
		{Name: "nodes", Type: TypeNodeSpec, Perm: rw},
		{Name: "neednodes", Type: TypeString, Perm: ReadMgr | WriteMgr},
		{Name: "nodect", Type: TypeLong, Perm: ReadAll | WriteMgr, Flags: FlagSummed | FlagNoMOM},
		{Name: "procct", Type: TypeLong, Perm: ReadMgr | WriteMgr, Flags: FlagNoReport},
		{Name: "mpplabel", Type: TypeString, Perm: rw},
		{Name: "other", Type: TypeString, Perm: rw},
		{Name: "software", Type: TypeString, Perm: rw},
		{Name: "taskspn", Type: TypeLong, Perm: omW},
	}
	for _, n := range []string{"mta", "mtb", "mtc", "mtd", "mte", "mtf", "mtg", "mth"} {
		defs = append(defs, ResourceDef{Name: n, Type: TypeLong, Perm: rw})
	}
	for _, n := range []string{"pf", "ppf", "sds", "psds"} {
		defs = append(defs, ResourceDef{Name: n, Type: TypeSize, Perm: rw, Flags: altrun})
	}
	defs = append(defs,
		ResourceDef{Name: "procs", Type: TypeLong, Perm: rw},
		ResourceDef{Name: "mppe", Type: TypeLong, Perm: rw},
		ResourceDef{Name: "mppt", Type: TypeTime, Perm: rw, Flags: altrun},
		ResourceDef{Name: "pmppt", Type: TypeTime, Perm: rw, Flags: altrun},
		ResourceDef{Name: "mppmem", Type: TypeSize, Perm: rw, Flags: altrun},
		ResourceDef{Name: "srfs_tmp", Type: TypeSize, Perm: rw},
		ResourceDef{Name: "srfs_big", Type: TypeSize, Perm: rw},
		ResourceDef{Name: "srfs_fast", Type: TypeSize, Perm: rw},
		ResourceDef{Name: "srfs_assist", Type: TypeBool, Perm: ReadOper | ReadMgr | WriteServer},
		ResourceDef{Name: "pe_mask", Type: TypeString, Perm: omW},
		ResourceDef{Name: "size", Type: TypeLong, Perm: rw},
		ResourceDef{Name: "cpapartitionid", Type: TypeString, Perm: rw},
		ResourceDef{Name: "cpaalloccookie", Type: TypeString, Perm: rw},
		ResourceDef{Name: "cpaadmincookie", Type: TypeString, Perm: rw},
		ResourceDef{Name: "mppwidth", Type: TypeLong, Perm: rw},
		ResourceDef{Name: "mppdepth", Type: TypeLong, Perm: rw},
		ResourceDef{Name: "mppnppn", Type: TypeLong, Perm: rw},
		ResourceDef{Name: "mppnodes", Type: TypeString, Perm: rw},
		ResourceDef{Name: "mpplabels", Type: TypeString, Perm: rw},
		ResourceDef{Name: "mpphost", Type: TypeString, Perm: rw},
		ResourceDef{Name: "mpparch", Type: TypeString, Perm: rw},
		ResourceDef{Name: "mpptime", Type: TypeTime, Perm: rw},
		ResourceDef{Name: "mppnodect", Type: TypeLong, Perm: omW},
	)
	// Moab pass-through strings.
	for _, n := range strings.Fields(`advres deadline depend ddisk dmem epilogue feature
		flags gattr geometry gmetric gres hostlist image jgroup jobflags latency loglevel
		minprocspeed minpreempttime minwclimit naccesspolicy nallocpolicy nodeset opsys os
		partition pref procs_bitmap prologue qos queuejob reqattr retrycount retrycc rmtype
		select sid signal stagein spriority subnode subnode_list taskdistpolicy template
		termsig termtime tid tpn trig trl var vcores wcrequeue`) {
		defs = append(defs, ResourceDef{Name: n, Type: TypeString, Perm: rw})
	}
	return defs
}

func newResources(defs []ResourceDef) *Resources {
	r := &Resources{defs: defs, exact: make(map[string]int, len(defs)), folded: make(map[string]int, len(defs))}
	for i := range r.defs {
		r.defs[i].index = i
		if _, dup := r.exact[r.defs[i].Name]; dup {
			continue // an earlier definition shadows a later one
		}
		r.exact[r.defs[i].Name] = i
		r.folded[strings.ToLower(r.defs[i].Name)] = i
	}
	return r
}

// Len returns the number of resource definitions.
func (r *Resources) Len() int { return len(r.defs) }

// Def returns resource definition number i.
func (r *Resources) Def(i int) *ResourceDef { return &r.defs[i] }

// Lookup finds a resource definition by name, case-insensitively.
func (r *Resources) Lookup(name string) (*ResourceDef, bool) {
	if i, ok := r.exact[name]; ok {
		return &r.defs[i], true
	}
	if i, ok := r.folded[strings.ToLower(name)]; ok {
		return &r.defs[i], true
	}
	return nil, false
}

// WithExtra returns a table extended by the given names as user-readable
// and user-writable string resources (the server's extra_resc). Names that
// already exist are skipped; existing indices do not change.
func (r *Resources) WithExtra(names []string) *Resources {
	defs := append([]ResourceDef(nil), r.defs...)
	for _, n := range names {
		if _, ok := r.Lookup(n); ok || n == "" {
			continue
		}
		defs = append(defs, ResourceDef{Name: n, Type: TypeString, Perm: ReadAll | WriteAll})
	}
	if len(defs) > 0xffff {
		defs = defs[:0xffff]
	}
	return newResources(defs)
}
