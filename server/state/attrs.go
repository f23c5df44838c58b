package state

import (
	"sort"
)

// AttrValue is one set value of an object's attribute: the definition index,
// the resource name for resource-list attributes (for unknown job
// attributes: the name, and "\x1f"+resource if one was given) and the
// canonical text value.
type AttrValue struct {
	Index    int
	Resource string
	Value    string
}

// Attrs holds the set attributes of one object, sorted by definition
// index and then resource name, which is exactly the reporting order.
type Attrs []AttrValue

func (l Attrs) search(idx int, res string) (int, bool) {
	i := sort.Search(len(l), func(i int) bool {
		return l[i].Index > idx || l[i].Index == idx && l[i].Resource >= res
	})
	return i, i < len(l) && l[i].Index == idx && l[i].Resource == res
}

// Get returns a plain attribute's value ("" if unset).
func (l Attrs) Get(idx int) string { return l.GetRes(idx, "") }

// Has reports whether an attribute Has any value (any resource).
func (l Attrs) Has(idx int) bool {
	i, _ := l.search(idx, "")
	return i < len(l) && l[i].Index == idx
}

// GetRes returns one resource of a resource-list attribute.
func (l Attrs) GetRes(idx int, res string) string {
	if i, ok := l.search(idx, res); ok {
		return l[i].Value
	}
	return ""
}

// LookupRes is getRes with a presence flag.
func (l Attrs) LookupRes(idx int, res string) (string, bool) {
	if i, ok := l.search(idx, res); ok {
		return l[i].Value, true
	}
	return "", false
}

// Set stores a value; an empty value unsets.
func (l *Attrs) Set(idx int, val string) { l.SetRes(idx, "", val) }

// SetRes stores one resource value; an empty value unsets it.
func (l *Attrs) SetRes(idx int, res, val string) {
	i, ok := l.search(idx, res)
	switch {
	case ok && val == "":
		*l = append((*l)[:i], (*l)[i+1:]...)
	case ok:
		(*l)[i].Value = val
	case val != "":
		*l = append(*l, AttrValue{})
		copy((*l)[i+1:], (*l)[i:])
		(*l)[i] = AttrValue{Index: idx, Resource: res, Value: val}
	}
}

// Unset removes an attribute with all its resources.
func (l *Attrs) Unset(idx int) {
	i, _ := l.search(idx, "")
	j := i
	for j < len(*l) && (*l)[j].Index == idx {
		j++
	}
	*l = append((*l)[:i], (*l)[j:]...)
}

// Resources returns the values of a resource-list attribute.
func (l Attrs) Resources(idx int) []AttrValue {
	i, _ := l.search(idx, "")
	j := i
	for j < len(l) && l[j].Index == idx {
		j++
	}
	return l[i:j]
}

// Clone returns a copy of the list.
func (l Attrs) Clone() Attrs { return append(Attrs(nil), l...) }
