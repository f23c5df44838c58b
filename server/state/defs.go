package state

import (
	"strings"

	"gopbs/attr"
)

// The attribute and resource definitions — names, order, value types,
// permissions and flags (spec 04) — live in package attr, and the server
// uses attr's names for them (attr.JobComment, attr.TypeLong,
// attr.WriteUser, attr.FlagAltRun, ...). This file gives the server its
// view of the definition tables, with the server-only slot for unknown
// job attributes.

// IsList reports whether values of type t are string arrays (ACLs
// included).
func IsList(t attr.Type) bool { return t == attr.TypeStringArray || t == attr.TypeACL }

// AttrDef is the server's view of one attribute definition: attr's name,
// type, permissions, flags and queue kind.
type AttrDef struct {
	Name  string
	Type  attr.Type
	Perm  attr.Perm
	Flags attr.Flag
	Kind  attr.QueueKind
	def   *attr.Def // nil for server-only definitions
}

// Decode checks a value sent for the attribute, its syntax and any
// further rule of its definition (reserve takes y or n only), and returns
// its canonical text.
func (d *AttrDef) Decode(v string) (string, bool) {
	val, err := attr.Parse(d.Type, v)
	if err != nil || d.def != nil && d.def.Check(val) != nil {
		return "", false
	}
	return val.Encode(attr.ModeServer), true
}

// DefTable is the server's view of one of attr's definition tables, in
// definition (= reporting) order, possibly followed by server-only
// definitions.
type DefTable struct {
	table *attr.Table
	Defs  []AttrDef
	extra map[string]int // server-only names
}

// newDefTable builds the server's view of t followed by the server-only
// definitions extra.
func newDefTable(t *attr.Table, extra ...AttrDef) *DefTable {
	dt := &DefTable{table: t, Defs: make([]AttrDef, 0, t.Len()+len(extra)), extra: map[string]int{}}
	for i, d := range t.Defs() {
		dt.Defs = append(dt.Defs, AttrDef{Name: d.Name, Type: d.Type, Perm: d.Perm, Flags: d.Flags, Kind: d.Kind, def: t.Def(i)})
	}
	for _, d := range extra {
		dt.extra[strings.ToLower(d.Name)] = len(dt.Defs)
		dt.Defs = append(dt.Defs, d)
	}
	return dt
}

// Find returns the index of a name (case-insensitive), or -1.
func (t *DefTable) Find(name string) int {
	if i := t.table.Index(name); i >= 0 {
		return i
	}
	if i, ok := t.extra[strings.ToLower(name)]; ok {
		return i
	}
	return -1
}

var (
	// JobDefs ends with _other_ (unknownJobAttr), the slot in which the
	// server keeps attributes it does not know, by name.
	JobDefs = newDefTable(attr.JobTable(), AttrDef{
		Name: "_other_", Type: attr.TypeString,
		Perm: attr.ReadAll | attr.WriteAll, Flags: attr.FlagSelEQ,
	})
	QueueDefs  = newDefTable(attr.QueueTable())
	ServerDefs = newDefTable(attr.ServerTable())
	NodeDefs   = newDefTable(attr.NodeTable())
)

// ResourceDef is the server's view of a resource definition (spec 04 §9).
// A zero ResourceDef (perm 0) stands for an unknown resource: every known one
// has some permission.
type ResourceDef struct {
	Type  attr.Type
	Perm  attr.Perm
	Flags attr.Flag
}

// Resources maps the names of the Resources known by default to their
// definitions.
var Resources = func() map[string]ResourceDef {
	res := attr.DefaultResources()
	m := make(map[string]ResourceDef, res.Len())
	for i := 0; i < res.Len(); i++ {
		d := res.Def(i)
		if _, dup := m[d.Name]; !dup {
			m[d.Name] = ResourceDef{Type: d.Type, Perm: d.Perm, Flags: d.Flags}
		}
	}
	return m
}()

// UnknownJobAttr is the job definition slot after attr.JobTable's in
// which the server keeps attributes it does not know, by name.
const UnknownJobAttr = attr.NumJobAttrs
