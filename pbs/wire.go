package pbs

import "gopbs/batchreq"

// Attr is one attribute list entry as the commands build and read them:
// attribute name, optional resource, value and batch operation. Requests
// carry it on the wire as a batchreq.Attr (see statusNames and opList).
type Attr struct {
	Name     string
	Resource string // "" for none
	Value    string
	Op       int // batch operation: batchreq.SET, batchreq.EQ, ...
	// ValueSet makes an empty Value count in the entry size of status
	// requests, as qmgr's empty strings do; other clients send a NULL
	// value there. Submit, manager and select lists always count it.
	ValueSet bool
}

// FullName returns "name" or "name.resource".
func (a Attr) FullName() string {
	if a.Resource != "" {
		return a.Name + "." + a.Resource
	}
	return a.Name
}

// wire returns the entry as the protocol carries it, with the ordinary
// (attropl) size.
func (a Attr) wire() batchreq.Attr {
	return batchreq.Attr{Name: a.Name, Resource: a.Resource, HasResource: a.Resource != "",
		Value: a.Value, Op: a.Op}
}

// statusNames returns the wanted-attribute list of a status request in
// the client attrl flavour (spec 02 §2.1): an entry whose value is NULL
// (empty and not ValueSet) is sized without the value's terminator.
func statusNames(list []Attr) batchreq.AttrList {
	l := opList(list)
	for i, a := range list {
		if a.Value == "" && !a.ValueSet {
			l[i].Size = batchreq.NameOnlySize(a.Name, a.Resource, a.Resource != "")
		}
	}
	return l
}

// opList returns an attribute list in the attropl flavour of submit,
// manager and select requests: every entry counts its value.
func opList(list []Attr) batchreq.AttrList {
	if list == nil {
		return nil
	}
	l := make(batchreq.AttrList, len(list))
	for i, a := range list {
		l[i] = a.wire()
	}
	return l
}

// Status is one object of a status reply.
type Status struct {
	ObjType int // batchreq.MGR_OBJ_*
	Name    string
	Attrs   []Attr
}

// Get returns the value of the first attribute called name (with the given
// resource, "" for none) and whether it is present.
func (s *Status) Get(name, resource string) (string, bool) {
	for _, a := range s.Attrs {
		if a.Name == name && a.Resource == resource {
			return a.Value, true
		}
	}
	return "", false
}

// statusObjects converts the objects of a Status reply.
func statusObjects(objs []batchreq.StatusObject) []Status {
	if len(objs) == 0 {
		return nil
	}
	out := make([]Status, len(objs))
	for i := range objs {
		o := &objs[i]
		attrs := make([]Attr, len(o.Attrs))
		for k := range o.Attrs {
			w := &o.Attrs[k]
			attrs[k] = Attr{Name: w.Name, Value: w.Value, Op: w.Op}
			if w.HasResource {
				attrs[k].Resource = w.Resource
			}
		}
		out[i] = Status{ObjType: o.ObjType, Name: o.Name, Attrs: attrs}
	}
	return out
}
