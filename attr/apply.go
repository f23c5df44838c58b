package attr

// Decode parses text for the attribute called name (and resource, for
// resource lists) and stores it, the way the server builds an object from
// a request's attribute list (QueueJob, or the temporary set of a modify
// request): a value replaces the previous one, except that a string array
// that already has a value in s gets the new elements appended.
//
// Names are matched case-insensitively. An unknown attribute name is kept
// verbatim for jobs and is PBSE_NOATTR for other objects; an unknown
// resource is kept verbatim for jobs and is PBSE_UNKRESC otherwise.
// Malformed values give the type's error (usually PBSE_BADATVAL). Errors
// carry the attribute and resource names. Setting a job's
// Resource_List.nodes or procs updates nodect, neednodes and procct.
func (s *Set) Decode(name, resource string, hasResource bool, text string) error {
	return s.decode(name, resource, hasResource, text, true)
}

// Load is Decode without side effects: derived resources are not
// recomputed. Use it to rebuild an object from stored or reported
// attributes (job files at recovery, status replies); it also accepts the
// True/False client form of interactive.
func (s *Set) Load(name, resource string, hasResource bool, text string) error {
	return s.decode(name, resource, hasResource, text, false)
}

func (s *Set) decode(name, resource string, hasResource bool, text string, derive bool) error {
	d, ok := s.table.Lookup(name)
	if !ok {
		if s.table.Object == ObjJob {
			s.PutOther(Other{Name: name, Resource: resource, HasResc: hasResource, Value: text})
			return nil
		}
		return &Error{Code: pbseNoAttr, Name: name, Resource: resource, Reason: "unknown attribute"}
	}
	if d.Type == TypeResourceList {
		rd, ok := s.table.resources.Lookup(resource)
		if !ok {
			if s.table.Object == ObjJob && resource != "" {
				s.PutOther(Other{Name: d.Name, Resource: resource, HasResc: true, Value: text})
				return nil
			}
			return &Error{Code: pbseUnkResc, Name: d.Name, Resource: resource, Reason: "unknown resource"}
		}
		v, err := Parse(rd.Type, text)
		if err != nil {
			return withName(err, d.Name, rd.Name)
		}
		s.putResource(d.index, rd, v)
		if derive {
			s.afterResourceChange(d.index, rd)
		}
		return nil
	}
	v, err := Parse(d.Type, text)
	if err != nil && !derive && d.Type == TypeInteractive {
		// A reported interactive value is the boolean client form.
		var b Value
		if b, err = Parse(TypeBool, text); err == nil {
			v = Value{typ: TypeInteractive, n: b.n, flags: FlagSet}
		}
	}
	if err == nil && d.check != nil && v.IsSet() {
		err = d.check(v)
	}
	if err != nil {
		return withName(err, d.Name, "")
	}
	if (d.Type == TypeStringArray || d.Type == TypeACL) && v.IsSet() && s.has(d.index) {
		v.s = s.Get(d.index).s + "," + v.s
	}
	s.Put(d.index, v)
	return nil
}

// Modify applies op with operand v to attribute i, or to its resource rd
// when i is a resource list (rd is ignored otherwise). SET replaces, UNSET
// removes, INCR/INCR_OLD and DECR combine as described at Combine; other
// operations behave as SET. A value of an incompatible type is
// PBSE_ATTRTYPE.
func (s *Set) Modify(i int, rd *ResourceDef, v Value, op Op) error {
	d := &s.table.defs[i]
	if d.Type == TypeResourceList {
		if rd == nil {
			if op.normalize() == OpUnset {
				s.Unset(i)
				return nil
			}
			return &Error{Code: pbseUnkResc, Name: d.Name, Reason: "no resource name"}
		}
		v = v.as(rd.Type)
		if v.IsSet() && v.typ != rd.Type {
			return &Error{Code: pbseAttrType, Name: d.Name, Resource: rd.Name, Reason: v.typ.String() + " value for a " + rd.Type.String() + " resource"}
		}
		nv, err := Combine(s.Resource(i, rd), v, op)
		if err != nil {
			return withName(err, d.Name, rd.Name)
		}
		s.putResource(i, rd, nv)
		s.afterResourceChange(i, rd)
		return nil
	}
	v = v.as(d.Type)
	if v.IsSet() && v.typ != d.Type {
		return &Error{Code: pbseAttrType, Name: d.Name, Reason: v.typ.String() + " value for a " + d.Type.String() + " attribute"}
	}
	if d.check != nil && v.IsSet() {
		if err := d.check(v); err != nil {
			return withName(err, d.Name, "")
		}
	}
	nv, err := Combine(s.Get(i), v, op)
	if err != nil {
		return withName(err, d.Name, "")
	}
	s.Put(i, nv)
	return nil
}

// ModifyText is Modify with a value in text form and the attribute and
// resource given by name (case-insensitive). Unknown names give
// PBSE_NOATTR and PBSE_UNKRESC; unknown job attributes are not stored
// (use Decode for submissions).
func (s *Set) ModifyText(name, resource, text string, op Op) error {
	d, ok := s.table.Lookup(name)
	if !ok {
		return &Error{Code: pbseNoAttr, Name: name, Resource: resource, Reason: "unknown attribute"}
	}
	if d.Type == TypeResourceList {
		if resource == "" && op.normalize() == OpUnset {
			return s.Modify(d.index, nil, Value{}, op)
		}
		rd, ok := s.table.resources.Lookup(resource)
		if !ok {
			return &Error{Code: pbseUnkResc, Name: d.Name, Resource: resource, Reason: "unknown resource"}
		}
		if op.normalize() == OpUnset {
			return s.Modify(d.index, rd, Value{}, op)
		}
		v, err := Parse(rd.Type, text)
		if err != nil {
			return withName(err, d.Name, rd.Name)
		}
		return s.Modify(d.index, rd, v, op)
	}
	if op.normalize() == OpUnset {
		return s.Modify(d.index, nil, Value{}, op) // the value is irrelevant
	}
	v, err := Parse(d.Type, text)
	if err != nil {
		return withName(err, d.Name, "")
	}
	return s.Modify(d.index, nil, v, op)
}

// FillDefaults gives attribute i every resource of attribute di of
// defaults (for example a queue's or the server's resources_default) that
// i does not have yet, flagged FlagDefault. It returns the number of
// resources added.
func (s *Set) FillDefaults(i int, defaults *Set, di int) int {
	n := 0
	for drd, v := range defaults.Resources(di) {
		rd := drd
		if defaults.table.resources != s.table.resources {
			var ok bool
			if rd, ok = s.table.resources.Lookup(drd.Name); !ok {
				continue
			}
		}
		if s.Resource(i, rd).IsSet() {
			continue
		}
		s.putResource(i, rd, v.WithFlags(FlagDefault))
		s.afterResourceChange(i, rd)
		n++
	}
	return n
}

// RemoveDefaults removes the resources of attribute i that carry
// FlagDefault (when a job leaves the queue that supplied them).
func (s *Set) RemoveDefaults(i int) {
	lo, hi := s.resRange(i)
	removed := false
	for k := hi - 1; k >= lo; k-- {
		if s.res[k].flags&FlagDefault != 0 {
			s.res = append(s.res[:k], s.res[k+1:]...)
			removed = true
		}
	}
	if removed && s.table.Object == ObjJob && i == JobResourceList {
		s.deriveNodes()
	}
}

// ExceedsLimit compares the resources of attribute i with the limits in
// attribute li of limits (resources_max when isMax is true, resources_min
// otherwise) and returns the first resource that violates its limit:
// greater than the maximum or less than the minimum. Only resources set on
// both sides with ordered types (numbers, sizes, times) are compared.
func (s *Set) ExceedsLimit(i int, limits *Set, li int, isMax bool) (*ResourceDef, bool) {
	for lrd, lim := range limits.Resources(li) {
		rd := lrd
		if limits.table.resources != s.table.resources {
			var ok bool
			if rd, ok = s.table.resources.Lookup(lrd.Name); !ok {
				continue
			}
		}
		v := s.Resource(i, rd)
		if !v.IsSet() {
			continue
		}
		switch v.typ {
		case TypeLong, TypeLongLong, TypeSize, TypeTime:
		default:
			continue
		}
		c, ok := Compare(v, lim)
		if !ok {
			continue
		}
		if isMax && c > 0 || !isMax && c < 0 {
			return rd, true
		}
	}
	return nil, false
}

// AddSummed adds (op INCR) or subtracts (op DECR) the summed resources
// (FlagSummed: mem, vmem, ncpus, nodect) of attribute si of src to
// attribute di of s, the way a queue's and the server's
// resources_assigned follow the jobs that run. A subtraction never goes
// below zero for sizes.
func (s *Set) AddSummed(di int, src *Set, si int, op Op) {
	for srd, v := range src.Resources(si) {
		if srd.Flags&FlagSummed == 0 {
			continue
		}
		rd := srd
		if src.table.resources != s.table.resources {
			var ok bool
			if rd, ok = s.table.resources.Lookup(srd.Name); !ok {
				continue
			}
		}
		nv, err := Combine(s.Resource(di, rd), v, op)
		if err != nil {
			continue
		}
		s.putResource(di, rd, nv)
	}
}

// ExceedsMax applies the maximum check of queue admission (spec 12 §4.3
// check 6): each resource of attribute i must not exceed the queue's limit
// in attribute qi of queue or, for resources the queue does not limit,
// the server's limit in attribute si of server (server may be nil).
func (s *Set) ExceedsMax(i int, queue *Set, qi int, server *Set, si int) (*ResourceDef, bool) {
	if rd, bad := s.ExceedsLimit(i, queue, qi, true); bad {
		return rd, true
	}
	if server == nil {
		return nil, false
	}
	for srd, lim := range server.Resources(si) {
		if queue.ResourceByName(qi, srd.Name).IsSet() {
			continue // the queue's own limit applies
		}
		rd, ok := s.table.resources.Lookup(srd.Name)
		if !ok {
			continue
		}
		v := s.Resource(i, rd)
		switch v.typ {
		case TypeLong, TypeLongLong, TypeSize, TypeTime:
		default:
			continue
		}
		if c, ok := Compare(v, lim); ok && c > 0 {
			return rd, true
		}
	}
	return nil, false
}
