package attr

import (
	"strconv"
	"strings"
)

// Perm holds the read and write permission bits of an attribute or
// resource definition (the Read and Write columns of spec 04).
type Perm uint8

// Permission bits.
const (
	ReadUser    Perm = 1 << iota // U in the Read column
	ReadOper                     // O in the Read column
	ReadMgr                      // M in the Read column
	WriteUser                    // U in the Write column
	WriteOper                    // O in the Write column
	WriteMgr                     // M in the Write column
	WriteServer                  // S: writable by privileged connections (server, scheduler, MOM)

	ReadAll  = ReadUser | ReadOper | ReadMgr
	WriteAll = WriteUser | WriteOper | WriteMgr
	readMask = ReadAll
)

// Access is the permission level of a requester.
type Access uint8

// Access bits; a plain user has AccessUser only.
const (
	AccessUser       Access = 1 << iota // every authenticated user
	AccessOper                          // listed in operators (or root on the server host)
	AccessMgr                           // listed in managers (or root on the server host)
	AccessPrivileged                    // privileged connection: server, scheduler, MOM
)

// Flag holds the behaviour flags of an attribute definition.
type Flag uint16

// Definition flags (spec 04 §2).
const (
	FlagCreate    Flag = 1 << iota // CREATE: a user may give it at submission
	FlagAltRun                     // ALTRUN: may be modified while the job runs
	FlagSelEQ                      // SELEQ: Select allows only EQ and NE
	FlagPrivRead                   // PRIVR: readable only by owner, operators, managers
	FlagMOM                        // MOM: sent to the MOM with the job
	FlagSendSvr                    // SvRD: sent to another server when the job moves
	FlagAlwaysRep                  // node attributes reported even when unset (state, np, ntype, gpus)
	FlagNoReport                   // never reported in status (procct)
	FlagSummed                     // resource summed into resources_assigned
	FlagNoMOM                      // resource not sent to the MOM (nodect)
	FlagShared                     // value usually shared by many objects: interned on storage
)

// QueueKind says to which queue types a queue attribute applies.
type QueueKind uint8

// Queue kinds.
const (
	KindAny       QueueKind = iota // A: any queue
	KindExecution                  // E: execution queues only
	KindRoute                      // R: route queues only
)

// Def is the definition of one attribute of an object type.
type Def struct {
	Name  string
	Type  Type
	Perm  Perm
	Flags Flag
	Kind  QueueKind // queue attributes only
	ACL   ACLKind   // how ACL-typed attributes match
	// Default is the text of the value an object gets when it is created
	// (job, queue, node) or when the server starts (server), "" for none.
	Default string
	// Unset is the text of the value the server behaves as if set to when
	// the attribute is unset (documentation for the server; never reported).
	Unset string
	index int
	// check, if set, validates a decoded value beyond its type's syntax.
	check func(Value) error
}

// Index returns the definition number, which is also the attribute's
// position in the reporting order.
func (d *Def) Index() int { return d.index }

// Check validates a decoded value beyond its type's syntax (for example
// reserve takes only y or n): nil when the value is acceptable. Unset
// values are always acceptable.
func (d *Def) Check(v Value) error {
	if d.check == nil || !v.IsSet() {
		return nil
	}
	return withName(d.check(v), d.Name, "")
}

// Readable reports whether a requester with access a may see the attribute
// (PRIVR is the caller's business, see StatusOptions). Privileged
// connections see every attribute that anyone may read.
func (d *Def) Readable(a Access) bool { return readable(d.Perm, a) }

// Writable reports whether a requester with access a may set the
// attribute.
func (d *Def) Writable(a Access) bool { return writable(d.Perm, a) }

// Readable reports whether the permissions p let a requester with access a
// read: a Read column letter matches one of a's bits; privileged
// connections may read whatever anyone may. (A manager who is to have the
// operators' rights too is given AccessOper as well.)
func (p Perm) Readable(a Access) bool { return readable(p, a) }

// Writable reports whether the permissions p let a requester with access a
// write: a Write column letter matches one of a's bits; privileged
// connections may write whatever anyone, or S, may.
func (p Perm) Writable(a Access) bool { return writable(p, a) }

func readable(p Perm, a Access) bool {
	if a&AccessPrivileged != 0 {
		return p&readMask != 0
	}
	return a&AccessUser != 0 && p&ReadUser != 0 ||
		a&AccessOper != 0 && p&ReadOper != 0 ||
		a&AccessMgr != 0 && p&ReadMgr != 0
}

func writable(p Perm, a Access) bool {
	if a&AccessPrivileged != 0 {
		return p&(WriteAll|WriteServer) != 0
	}
	return a&AccessUser != 0 && p&WriteUser != 0 ||
		a&AccessOper != 0 && p&WriteOper != 0 ||
		a&AccessMgr != 0 && p&WriteMgr != 0
}

// Object is the kind of object an attribute table describes. The values are
// the MGR_OBJ_* numbers of spec 02 §2.3.
type Object int

// Object kinds.
const (
	ObjServer Object = 0
	ObjQueue  Object = 1
	ObjJob    Object = 2
	ObjNode   Object = 3
)

// maxDefs is the largest number of definitions a Table may hold (a Set
// keeps a 128-bit presence mask).
const maxDefs = 128

// Table is the ordered attribute definition table of one object kind. It
// is immutable and safe for concurrent use.
type Table struct {
	Object    Object
	defs      []Def
	exact     map[string]int
	folded    map[string]int
	resources *Resources
}

func newTable(obj Object, defs []Def, res *Resources) *Table {
	if len(defs) > maxDefs {
		panic("attr: too many attribute definitions")
	}
	t := &Table{Object: obj, defs: defs, exact: make(map[string]int, len(defs)), folded: make(map[string]int, len(defs)), resources: res}
	for i := range t.defs {
		t.defs[i].index = i
		t.exact[t.defs[i].Name] = i
		t.folded[strings.ToLower(t.defs[i].Name)] = i
	}
	return t
}

// Len returns the number of definitions.
func (t *Table) Len() int { return len(t.defs) }

// Def returns definition number i.
func (t *Table) Def(i int) *Def { return &t.defs[i] }

// Defs returns the definitions in definition (= reporting) order. The
// slice must not be modified.
func (t *Table) Defs() []Def { return t.defs }

// Lookup finds a definition by name, case-insensitively (the server
// accepts job_name for Job_Name); the definition carries the canonical
// spelling.
func (t *Table) Lookup(name string) (*Def, bool) {
	if i, ok := t.exact[name]; ok {
		return &t.defs[i], true
	}
	if i, ok := t.folded[strings.ToLower(name)]; ok {
		return &t.defs[i], true
	}
	return nil, false
}

// Index returns the definition number of name (case-insensitive), or -1.
func (t *Table) Index(name string) int {
	if d, ok := t.Lookup(name); ok {
		return d.index
	}
	return -1
}

// Resources returns the resource definitions used by the table's
// resource-list attributes.
func (t *Table) Resources() *Resources { return t.resources }

// WithResources returns a copy of t whose resource-list attributes use
// res (for example the default resources extended by the server's
// extra_resc names).
func (t *Table) WithResources(res *Resources) *Table {
	c := *t
	c.resources = res
	return &c
}

// String returns the object kind's name (server, queue, job, node).
func (o Object) String() string {
	switch o {
	case ObjServer:
		return "server"
	case ObjQueue:
		return "queue"
	case ObjJob:
		return "job"
	case ObjNode:
		return "node"
	}
	return "object(" + strconv.Itoa(int(o)) + ")"
}

// SubmitSettable reports whether a QueueJob from a requester with access a
// may set the attribute (spec 04 §2, submission rule): ordinary clients may
// set attributes whose Write column has U or that carry CREATE; privileged
// connections may also set M and S attributes.
func (d *Def) SubmitSettable(a Access) bool {
	if d.Perm&WriteUser != 0 || d.Flags&FlagCreate != 0 {
		return true
	}
	return a&AccessPrivileged != 0 && d.Perm&(WriteMgr|WriteServer) != 0
}

// SelectOpAllowed reports whether a Select/SelStat criterion on the
// attribute may use op: SELEQ attributes allow only EQ and NE.
func (d *Def) SelectOpAllowed(op Op) bool {
	return d.Flags&FlagSelEQ == 0 || op == OpEQ || op == OpNE
}
