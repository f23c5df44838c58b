package attr

import (
	"iter"
	"math/bits"
	"slices"
	"strings"
)

// Set holds the attribute values of one object (a job, queue, server or
// node). It is compact: a 128-bit presence mask, the set values in
// definition order, the resources of all resource-list attributes in one
// sorted slice and, for jobs, the unknown attributes kept verbatim. A
// typical job needs under 2 KB including its strings (see Compact).
//
// Resource definitions passed to a Set must come from its table's
// Resources.
//
// The zero Set is not usable; create one with NewSet or MakeSet. A Set is
// not safe for concurrent modification.
type Set struct {
	table *Table
	mask  [2]uint64
	vals  []Value // one per set attribute, in definition order
	res   []Value // resources: ordered by attribute, then resource name
	other []Other // unknown attributes and resources, in arrival order
}

// Other is an attribute (or resource) unknown to the definition tables,
// kept verbatim.
type Other struct {
	Name     string
	Resource string // "" for a plain attribute
	Value    string
	HasResc  bool // the entry carried a resource name (even an empty one)
}

// NewSet returns an empty set for objects described by t.
func NewSet(t *Table) *Set { s := MakeSet(t); return &s }

// MakeSet returns an empty set by value, for embedding in object structs.
func MakeSet(t *Table) Set { return Set{table: t} }

// Table returns the definition table of the set.
func (s *Set) Table() *Table { return s.table }

func (s *Set) has(i int) bool { return s.mask[i>>6]&(1<<(uint(i)&63)) != 0 }

// slot returns the position in vals of attribute i (which must be set, or
// the insertion position if not).
func (s *Set) slot(i int) int {
	w, b := i>>6, uint(i)&63
	n := bits.OnesCount64(s.mask[w] & (1<<b - 1))
	if w == 1 {
		n += bits.OnesCount64(s.mask[0])
	}
	return n
}

// Has reports whether attribute i has a value. For resource-list
// attributes it reports whether any resource is set.
func (s *Set) Has(i int) bool {
	if s.table.defs[i].Type == TypeResourceList {
		lo, hi := s.resRange(i)
		return lo < hi
	}
	return s.has(i)
}

// Get returns the value of attribute i (unset if it has none). Resource
// lists have no value of their own: use Resource or Resources.
func (s *Set) Get(i int) Value {
	if !s.has(i) {
		return Value{}
	}
	return s.vals[s.slot(i)]
}

// Put stores v as the value of attribute i, marking it modified; an unset v
// removes the value. It is plain storage without checks: v should have the
// definition's type (values stored alike, such as string arrays and ACLs,
// are converted; others keep their own type and encoding). Resource-list
// attributes take their values through PutResource.
func (s *Set) Put(i int, v Value) {
	if !v.IsSet() {
		s.Unset(i)
		return
	}
	d := &s.table.defs[i]
	if d.Type == TypeResourceList {
		return
	}
	v = v.as(d.Type)
	v.flags |= FlagSet | FlagModify
	v.ra, v.rd = 0, 0
	if d.Flags&FlagShared != 0 {
		v.s = intern(v.s)
	}
	k := s.slot(i)
	if s.has(i) {
		s.vals[k] = v
		return
	}
	s.mask[i>>6] |= 1 << (uint(i) & 63)
	s.vals = slices.Insert(s.vals, k, v)
}

// Unset removes the value of attribute i (all resources of a resource
// list).
func (s *Set) Unset(i int) {
	if s.table.defs[i].Type == TypeResourceList {
		lo, hi := s.resRange(i)
		s.res = slices.Delete(s.res, lo, hi)
		return
	}
	if !s.has(i) {
		return
	}
	k := s.slot(i)
	s.mask[i>>6] &^= 1 << (uint(i) & 63)
	s.vals = slices.Delete(s.vals, k, k+1)
}

// resRange returns the bounds in res of the resources of attribute i.
func (s *Set) resRange(i int) (lo, hi int) {
	lo = 0
	for lo < len(s.res) && int(s.res[lo].ra) < i {
		lo++
	}
	hi = lo
	for hi < len(s.res) && int(s.res[hi].ra) == i {
		hi++
	}
	return lo, hi
}

// resFind returns the position of resource rd of attribute i in res and
// whether it is present (else the insertion position keeping names in
// alphabetical order).
func (s *Set) resFind(i int, rd *ResourceDef) (int, bool) {
	lo, hi := s.resRange(i)
	defs := s.table.resources.defs
	for k := lo; k < hi; k++ {
		switch c := strings.Compare(defs[s.res[k].rd].Name, rd.Name); {
		case c == 0:
			return k, true
		case c > 0:
			return k, false
		}
	}
	return hi, false
}

// Resource returns resource rd of resource-list attribute i.
func (s *Set) Resource(i int, rd *ResourceDef) Value {
	if k, ok := s.resFind(i, rd); ok {
		v := s.res[k]
		v.ra, v.rd = 0, 0
		return v
	}
	return Value{}
}

// ResourceByName returns the resource called name of attribute i.
func (s *Set) ResourceByName(i int, name string) Value {
	rd, ok := s.table.resources.Lookup(name)
	if !ok {
		return Value{}
	}
	return s.Resource(i, rd)
}

// Resources iterates over the set resources of attribute i in alphabetical
// order of their names.
func (s *Set) Resources(i int) iter.Seq2[*ResourceDef, Value] {
	return func(yield func(*ResourceDef, Value) bool) {
		lo, hi := s.resRange(i)
		for k := lo; k < hi && k < len(s.res); k++ {
			v := s.res[k]
			rd := &s.table.resources.defs[v.rd]
			v.ra, v.rd = 0, 0
			if !yield(rd, v) {
				return
			}
		}
	}
}

// PutResource stores v as resource rd of attribute i, marking it modified;
// an unset v removes the resource. It is plain storage: unlike Decode and
// Modify it does not update the derived resources nodect, neednodes and
// procct.
func (s *Set) PutResource(i int, rd *ResourceDef, v Value) {
	s.putResource(i, rd, v)
}

// afterResourceChange updates derived job resources (nodect, neednodes,
// procct) after Resource_List.nodes or procs changed.
func (s *Set) afterResourceChange(i int, rd *ResourceDef) {
	if s.table.Object == ObjJob && i == JobResourceList && (rd.Name == ResNodes || rd.Name == ResProcs) {
		s.deriveNodes()
	}
}

func (s *Set) putResource(i int, rd *ResourceDef, v Value) {
	k, found := s.resFind(i, rd)
	if !v.IsSet() {
		if found {
			s.res = slices.Delete(s.res, k, k+1)
		}
		return
	}
	v = v.as(rd.Type)
	v.flags |= FlagSet | FlagModify
	v.ra, v.rd = uint8(i), uint16(rd.index)
	v.s = intern(v.s) // resource strings (nodes specs, archs, ...) repeat across jobs
	if found {
		s.res[k] = v
		return
	}
	s.res = slices.Insert(s.res, k, v)
}

// deriveNodes recomputes Resource_List.nodect, neednodes and procct from
// nodes and procs (spec 04 §3.2, 12 §9.2).
func (s *Set) deriveNodes() {
	r := s.table.resources
	nodes := s.ResourceByName(JobResourceList, ResNodes)
	procs := s.ResourceByName(JobResourceList, ResProcs)
	var nodeProcs int64
	if nodes.IsSet() {
		if spec, err := ParseNodeSpec(nodes.s); err == nil {
			nodeProcs = spec.ProcCount()
			if rd, ok := r.Lookup(ResNodeCt); ok {
				s.putResource(JobResourceList, rd, LongValue(spec.NodeCount()))
			}
		}
		if rd, ok := r.Lookup(ResNeedNodes); ok {
			s.putResource(JobResourceList, rd, StringValue(nodes.s))
		}
	}
	if rd, ok := r.Lookup(ResProcCt); ok {
		if nodes.IsSet() || procs.IsSet() {
			s.putResource(JobResourceList, rd, LongValue(nodeProcs+procs.n))
		} else {
			s.putResource(JobResourceList, rd, Value{})
		}
	}
}

// Others returns the unknown attributes kept verbatim, in arrival order.
// The slice must not be modified.
func (s *Set) Others() []Other { return s.other }

// PutOther stores an unknown attribute or resource verbatim, replacing an
// earlier entry with the same name and resource.
func (s *Set) PutOther(o Other) {
	for k := range s.other {
		if s.other[k].Name == o.Name && s.other[k].Resource == o.Resource {
			if o.Value == "" {
				s.other = slices.Delete(s.other, k, k+1)
			} else {
				s.other[k] = o
			}
			return
		}
	}
	if o.Value != "" || o.HasResc {
		s.other = append(s.other, o)
	}
}

// UnknownResources returns the names of resources given for attribute
// name that are not in the resource table (kept for route queues; an
// execution queue rejects them with PBSE_UNKRESC).
func (s *Set) UnknownResources(name string) []string {
	var out []string
	for _, o := range s.other {
		if o.HasResc && strings.EqualFold(o.Name, name) {
			out = append(out, o.Resource)
		}
	}
	return out
}

// Clone returns an independent copy of s (strings are shared, being
// immutable).
func (s *Set) Clone() *Set {
	c := *s
	c.vals = slices.Clone(s.vals)
	c.res = slices.Clone(s.res)
	c.other = slices.Clone(s.other)
	return &c
}

// Equal reports whether s and o hold the same values (flags ignored).
func (s *Set) Equal(o *Set) bool {
	if s.mask != o.mask || len(s.vals) != len(o.vals) || len(s.res) != len(o.res) || len(s.other) != len(o.other) {
		return false
	}
	for k := range s.vals {
		if !s.vals[k].Equal(o.vals[k]) {
			return false
		}
	}
	for k := range s.res {
		if !s.res[k].Equal(o.res[k]) || s.res[k].ra != o.res[k].ra || s.res[k].rd != o.res[k].rd {
			return false
		}
	}
	return slices.Equal(s.other, o.other)
}

// ClearModify clears FlagModify on every value (after a save).
func (s *Set) ClearModify() {
	for k := range s.vals {
		s.vals[k].flags &^= FlagModify
	}
	for k := range s.res {
		s.res[k].flags &^= FlagModify
	}
}

// Modified reports whether any value carries FlagModify.
func (s *Set) Modified() bool {
	for _, v := range s.vals {
		if v.flags&FlagModify != 0 {
			return true
		}
	}
	for _, v := range s.res {
		if v.flags&FlagModify != 0 {
			return true
		}
	}
	return false
}

// Compact releases the spare capacity of the set's internal slices. Call
// it once an object is fully built (for example after a submission) to keep
// long-lived sets small.
func (s *Set) Compact() {
	if cap(s.vals) > len(s.vals) {
		s.vals = slices.Clone(s.vals)
	}
	if cap(s.res) > len(s.res) {
		s.res = slices.Clone(s.res)
	}
	if cap(s.other) > len(s.other) {
		s.other = slices.Clone(s.other)
	}
}

// Attrs iterates over the attributes that have a value, in definition
// order, yielding the definition number and the value (resource lists are
// not included: see Resources).
func (s *Set) Attrs() iter.Seq2[int, Value] {
	return func(yield func(int, Value) bool) {
		k := 0
		for w := 0; w < 2; w++ {
			for m := s.mask[w]; m != 0; m &= m - 1 {
				i := w*64 + bits.TrailingZeros64(m)
				if !yield(i, s.vals[k]) {
					return
				}
				k++
			}
		}
	}
}
