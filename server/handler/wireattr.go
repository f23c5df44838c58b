package handler

import (
	"strings"

	"gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/state"
)

// WireAttr returns the batchreq entry (name, resource, value) of a stored
// value of the object kind whose definitions are defs.
func WireAttr(defs *state.DefTable, v state.AttrValue) batchreq.Attr {
	d := defs.Defs[v.Index]
	if d.Type == attr.TypeResourceList {
		return batchreq.Attr{Name: d.Name, Resource: v.Resource, HasResource: true, Value: v.Value}
	}
	if defs == state.JobDefs && v.Index == state.UnknownJobAttr {
		name, res, hasRes := strings.Cut(v.Resource, "\x1f")
		return batchreq.Attr{Name: name, Resource: res, HasResource: hasRes, Value: v.Value}
	}
	return batchreq.Attr{Name: d.Name, Value: v.Value}
}
