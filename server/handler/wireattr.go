package server

import (
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
	"gopbs/server/state"
)

// wireAttr returns the batchreq entry of a stored value.
func wireAttr(defs *state.DefTable, v state.AttrValue) batchreq.Attr {
	d := defs.Defs[v.Index]
	if d.Type == pbsattr.TypeResourceList {
		return batchreq.Attr{Name: d.Name, Resource: v.Resource, HasResource: true, Value: v.Value}
	}
	if defs == state.JobDefs && v.Index == state.UnknownJobAttr {
		name, res, hasRes := strings.Cut(v.Resource, "\x1f")
		return batchreq.Attr{Name: name, Resource: res, HasResource: hasRes, Value: v.Value}
	}
	return batchreq.Attr{Name: d.Name, Value: v.Value}
}
