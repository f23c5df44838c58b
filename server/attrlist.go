package server

import (
	"sort"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/batchreq"
)

// attrVal is one set value of an object's attribute: the definition index,
// the resource name for resource-list attributes (for unknown job
// attributes: the name, and "\x1f"+resource if one was given) and the
// canonical text value.
type attrVal struct {
	idx int
	res string
	val string
}

// attrList holds the set attributes of one object, sorted by definition
// index and then resource name, which is exactly the reporting order.
type attrList []attrVal

func (l attrList) search(idx int, res string) (int, bool) {
	i := sort.Search(len(l), func(i int) bool {
		return l[i].idx > idx || l[i].idx == idx && l[i].res >= res
	})
	return i, i < len(l) && l[i].idx == idx && l[i].res == res
}

// get returns a plain attribute's value ("" if unset).
func (l attrList) get(idx int) string { return l.getRes(idx, "") }

// has reports whether an attribute has any value (any resource).
func (l attrList) has(idx int) bool {
	i, _ := l.search(idx, "")
	return i < len(l) && l[i].idx == idx
}

// getRes returns one resource of a resource-list attribute.
func (l attrList) getRes(idx int, res string) string {
	if i, ok := l.search(idx, res); ok {
		return l[i].val
	}
	return ""
}

// lookupRes is getRes with a presence flag.
func (l attrList) lookupRes(idx int, res string) (string, bool) {
	if i, ok := l.search(idx, res); ok {
		return l[i].val, true
	}
	return "", false
}

// set stores a value; an empty value unsets.
func (l *attrList) set(idx int, val string) { l.setRes(idx, "", val) }

// setRes stores one resource value; an empty value unsets it.
func (l *attrList) setRes(idx int, res, val string) {
	i, ok := l.search(idx, res)
	switch {
	case ok && val == "":
		*l = append((*l)[:i], (*l)[i+1:]...)
	case ok:
		(*l)[i].val = val
	case val != "":
		*l = append(*l, attrVal{})
		copy((*l)[i+1:], (*l)[i:])
		(*l)[i] = attrVal{idx: idx, res: res, val: val}
	}
}

// unset removes an attribute with all its resources.
func (l *attrList) unset(idx int) {
	i, _ := l.search(idx, "")
	j := i
	for j < len(*l) && (*l)[j].idx == idx {
		j++
	}
	*l = append((*l)[:i], (*l)[j:]...)
}

// resources returns the values of a resource-list attribute.
func (l attrList) resources(idx int) []attrVal {
	i, _ := l.search(idx, "")
	j := i
	for j < len(l) && l[j].idx == idx {
		j++
	}
	return l[i:j]
}

func (l attrList) clone() attrList { return append(attrList(nil), l...) }

// wireAttr returns the batchreq entry of a stored value.
func wireAttr(defs *defTable, v attrVal) batchreq.Attr {
	d := defs.defs[v.idx]
	if d.typ == pbsattr.TypeResourceList {
		return batchreq.Attr{Name: d.name, Resource: v.res, HasResource: true, Value: v.val}
	}
	if defs == jobDefs && v.idx == unknownJobAttr {
		name, res, hasRes := strings.Cut(v.res, "\x1f")
		return batchreq.Attr{Name: name, Resource: res, HasResource: hasRes, Value: v.val}
	}
	return batchreq.Attr{Name: d.name, Value: v.val}
}
