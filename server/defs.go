package server

import (
	"strings"

	pbsattr "gopbs/attr"
)

// The attribute and resource definitions — names, order, value types,
// permissions and flags (spec 04) — live in package attr, and the server
// uses attr's names for them (attr.JobComment, attr.TypeLong,
// attr.WriteUser, attr.FlagAltRun, ...). This file gives the server its
// view of the definition tables, with the server-only slot for unknown
// job attributes.

// isList reports whether values of type t are string arrays (ACLs
// included).
func isList(t pbsattr.Type) bool { return t == pbsattr.TypeStringArray || t == pbsattr.TypeACL }

// access returns the attr access level of a requester: a manager has the
// operators' rights too.
func (p perm) access() pbsattr.Access {
	if p.svr {
		return pbsattr.AccessPrivileged
	}
	a := pbsattr.AccessUser
	if p.oper || p.mgr {
		a |= pbsattr.AccessOper
	}
	if p.mgr {
		a |= pbsattr.AccessMgr
	}
	return a
}

// canRead reports whether the requester's access lets it read an
// attribute or resource with permissions ap, by its permissions alone (see
// readable for PRIVR and NOREPORT).
func (p perm) canRead(ap pbsattr.Perm) bool {
	// Fast path: what users may read, everyone may.
	return ap&pbsattr.ReadUser != 0 || ap.Readable(p.access())
}

// writable reports whether the requester may write an attribute or
// resource with permissions ap.
func (p perm) writable(ap pbsattr.Perm) bool {
	return ap.Writable(p.access())
}

// attrDef is the server's view of one attribute definition: attr's name,
// type, permissions, flags and queue kind.
type attrDef struct {
	name  string
	typ   pbsattr.Type
	perm  pbsattr.Perm
	flags pbsattr.Flag
	kind  pbsattr.QueueKind
	def   *pbsattr.Def // nil for server-only definitions
}

// decode checks a value sent for the attribute, its syntax and any
// further rule of its definition (reserve takes y or n only), and returns
// its canonical text.
func (d *attrDef) decode(v string) (string, bool) {
	val, err := pbsattr.Parse(d.typ, v)
	if err != nil || d.def != nil && d.def.Check(val) != nil {
		return "", false
	}
	return val.Encode(pbsattr.ModeServer), true
}

// defTable is the server's view of one of attr's definition tables, in
// definition (= reporting) order, possibly followed by server-only
// definitions.
type defTable struct {
	table *pbsattr.Table
	defs  []attrDef
	extra map[string]int // server-only names
}

// newDefTable builds the server's view of t followed by the server-only
// definitions extra.
func newDefTable(t *pbsattr.Table, extra ...attrDef) *defTable {
	dt := &defTable{table: t, defs: make([]attrDef, 0, t.Len()+len(extra)), extra: map[string]int{}}
	for i, d := range t.Defs() {
		dt.defs = append(dt.defs, attrDef{name: d.Name, typ: d.Type, perm: d.Perm, flags: d.Flags, kind: d.Kind, def: t.Def(i)})
	}
	for _, d := range extra {
		dt.extra[strings.ToLower(d.name)] = len(dt.defs)
		dt.defs = append(dt.defs, d)
	}
	return dt
}

// find returns the index of a name (case-insensitive), or -1.
func (t *defTable) find(name string) int {
	if i := t.table.Index(name); i >= 0 {
		return i
	}
	if i, ok := t.extra[strings.ToLower(name)]; ok {
		return i
	}
	return -1
}

var (
	// jobDefs ends with _other_ (unknownJobAttr), the slot in which the
	// server keeps attributes it does not know, by name.
	jobDefs = newDefTable(pbsattr.JobTable(), attrDef{
		name: "_other_", typ: pbsattr.TypeString,
		perm: pbsattr.ReadAll | pbsattr.WriteAll, flags: pbsattr.FlagSelEQ,
	})
	queueDefs  = newDefTable(pbsattr.QueueTable())
	serverDefs = newDefTable(pbsattr.ServerTable())
	nodeDefs   = newDefTable(pbsattr.NodeTable())
)

// rescDef is the server's view of a resource definition (spec 04 §9).
// A zero rescDef (perm 0) stands for an unknown resource: every known one
// has some permission.
type rescDef struct {
	typ   pbsattr.Type
	perm  pbsattr.Perm
	flags pbsattr.Flag
}

// resources maps the names of the resources known by default to their
// definitions.
var resources = func() map[string]rescDef {
	res := pbsattr.DefaultResources()
	m := make(map[string]rescDef, res.Len())
	for i := 0; i < res.Len(); i++ {
		d := res.Def(i)
		if _, dup := m[d.Name]; !dup {
			m[d.Name] = rescDef{typ: d.Type, perm: d.Perm, flags: d.Flags}
		}
	}
	return m
}()

// unknownJobAttr is the job definition slot after attr.JobTable's in
// which the server keeps attributes it does not know, by name.
const unknownJobAttr = pbsattr.NumJobAttrs
