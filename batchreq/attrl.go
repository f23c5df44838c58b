package batchreq

import (
	"fmt"

	"gopbs/dis"
)

// Attr is one entry of an attribute list (spec 02 §2.1). The three C
// structures of the protocol (client attrl and attropl, server svrattrl)
// share this one encoding.
type Attr struct {
	Name        string
	Resource    string // meaningful only when HasResource is set
	HasResource bool
	Value       string
	Op          int // batch operation: SET, INCR, EQ, ...

	// Size is the entry's size field. Decoding keeps it exactly as
	// received, so that re-encoding reproduces the original bytes; when
	// encoding, a Size of 0 stands for the ordinary size, AttrSize.
	// Code that changes Name, Resource or Value of a decoded entry must
	// reset Size to 0 (or use Set), or the stale size is sent.
	Size int
}

// AttrList is an ordered attribute list.
type AttrList []Attr

// AttrSize is the size the attropl and svrattrl encoders send: the bytes
// of a buffer holding name, resource (if any) and value NUL-terminated.
func AttrSize(name, resource string, hasResource bool, value string) int {
	n := len(name) + 1 + len(value) + 1
	if hasResource {
		n += len(resource) + 1
	}
	return n
}

// NameOnlySize is the size the client attrl encoder sends for an entry
// whose value pointer is NULL (the wanted-attribute lists of status
// requests): the value's terminator is not counted, although the value
// travels as the empty string.
func NameOnlySize(name, resource string, hasResource bool) int {
	n := len(name) + 1
	if hasResource {
		n += len(resource) + 1
	}
	return n
}

// size returns the size field to send for a.
func (a *Attr) size() int {
	if a.Size != 0 {
		return a.Size
	}
	return AttrSize(a.Name, a.Resource, a.HasResource, a.Value)
}

// Set replaces the entry's value and resets Size so that the ordinary
// size is sent.
func (a *Attr) Set(value string) {
	a.Value = value
	a.Size = 0
}

// FullName returns "name" or "name.resource", the form used in messages
// and bad-attribute replies.
func (a *Attr) FullName() string {
	if a.HasResource {
		return a.Name + "." + a.Resource
	}
	return a.Name
}

// NewAttr returns an entry name=value with op SET and no resource.
func NewAttr(name, value string) Attr {
	return Attr{Name: name, Value: value, Op: SET}
}

// NewResourceAttr returns an entry name.resource=value with op SET.
func NewResourceAttr(name, resource, value string) Attr {
	return Attr{Name: name, Resource: resource, HasResource: true, Value: value, Op: SET}
}

// StatusNames returns the wanted-attribute list of a status request as
// the client attrl encoder sends it: each name with a NULL value (size
// NameOnlySize, value "", op SET).
func StatusNames(names ...string) AttrList {
	l := make(AttrList, len(names))
	for i, n := range names {
		l[i] = Attr{Name: n, Size: NameOnlySize(n, "", false)}
	}
	return l
}

// ResetSizes sets every entry's Size to 0, so that the list is sent with
// the ordinary sizes rather than those it was received with.
func (l AttrList) ResetSizes() {
	for i := range l {
		l[i].Size = 0
	}
}

// Get returns the value of the first entry named name without a resource.
func (l AttrList) Get(name string) (string, bool) {
	for i := range l {
		if l[i].Name == name && !l[i].HasResource {
			return l[i].Value, true
		}
	}
	return "", false
}

// GetResource returns the value of the first entry name.resource.
func (l AttrList) GetResource(name, resource string) (string, bool) {
	for i := range l {
		if l[i].Name == name && l[i].HasResource && l[i].Resource == resource {
			return l[i].Value, true
		}
	}
	return "", false
}

// Append appends the DIS encoding of the list to dst.
func (l AttrList) Append(dst []byte) []byte {
	dst = dis.AppendUint(dst, uint64(len(l)))
	for i := range l {
		a := &l[i]
		dst = dis.AppendUint(dst, uint64(uint32(a.size())))
		dst = dis.AppendString(dst, a.Name)
		if a.HasResource {
			dst = append(dst, "+1"...)
			dst = dis.AppendString(dst, a.Resource)
		} else {
			dst = append(dst, "+0"...)
		}
		dst = dis.AppendString(dst, a.Value)
		dst = dis.AppendUint(dst, uint64(uint32(a.Op)))
	}
	return dst
}

// maxPrealloc bounds the capacity reserved from a count read off the
// wire; longer lists grow as their entries actually arrive.
const maxPrealloc = 64

// ReadAttrList decodes an attribute list as a receiver of requests does
// (pbs_server, pbs_mom): each entry's size is the budget of its strings,
// and a string longer than what is left of it is dis.ErrOverflow.
func ReadAttrList(r *dis.Reader) (AttrList, error) { return readAttrList(r, true) }

// ReadReplyAttrList decodes an attribute list as a client decodes one in
// a reply: the size field is kept but not enforced.
func ReadReplyAttrList(r *dis.Reader) (AttrList, error) {
	var a arena
	return readReplyAttrList(r, &a)
}

func readAttrList(r *dis.Reader, budget bool) (AttrList, error) {
	n, err := r.Uint()
	if err != nil {
		return nil, fmt.Errorf("attribute count: %w", err)
	}
	l := make(AttrList, 0, min(n, maxPrealloc))
	for i := 0; i < n; i++ {
		a, err := readAttr(r, budget)
		if err != nil {
			return nil, fmt.Errorf("attribute %d of %d: %w", i+1, n, err)
		}
		l = append(l, a)
	}
	return l, nil
}

// readReplyAttrList is ReadReplyAttrList with the strings taken from a.
func readReplyAttrList(r *dis.Reader, ar *arena) (AttrList, error) {
	n, err := r.Uint()
	if err != nil {
		return nil, fmt.Errorf("attribute count: %w", err)
	}
	l := make(AttrList, 0, min(n, maxPrealloc))
	for i := 0; i < n; i++ {
		var a Attr
		if err := readReplyAttr(r, ar, &a); err != nil {
			return nil, fmt.Errorf("attribute %d of %d: %w", i+1, n, err)
		}
		l = append(l, a)
	}
	return l, nil
}

func readReplyAttr(r *dis.Reader, ar *arena, a *Attr) error {
	size, err := r.Uint32()
	if err != nil {
		return fmt.Errorf("size: %w", err)
	}
	a.Size = int(size)
	if a.Name, err = ar.str(r); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	has, err := r.Uint32()
	if err != nil {
		return fmt.Errorf("%s: resource flag: %w", a.Name, err)
	}
	if has != 0 {
		a.HasResource = true
		if a.Resource, err = ar.str(r); err != nil {
			return fmt.Errorf("%s: resource: %w", a.Name, err)
		}
	}
	if a.Value, err = ar.str(r); err != nil {
		return fmt.Errorf("%s: value: %w", a.FullName(), err)
	}
	op, err := r.Uint32()
	if err != nil {
		return fmt.Errorf("%s: op: %w", a.FullName(), err)
	}
	a.Op = int(op)
	return nil
}

// budgetStr reads a string bounded by the remaining budget left (< 0 is
// unbounded: the C remainder wrapped) and returns the new budget.
func budgetStr(r *dis.Reader, left int64) (string, int64, error) {
	var s string
	var err error
	if left < 0 {
		s, err = r.Str()
	} else {
		s, err = r.StrMax(int(min(left, 1<<32)))
	}
	if err != nil {
		return "", left, err
	}
	if left >= 0 {
		left -= int64(len(s)) + 1
	}
	return s, left, nil
}

func readAttr(r *dis.Reader, budget bool) (Attr, error) {
	var a Attr
	size, err := r.Uint32()
	if err != nil {
		return a, fmt.Errorf("size: %w", err)
	}
	a.Size = int(size)
	left := int64(-1)
	if budget {
		left = int64(size)
	}
	if a.Name, left, err = budgetStr(r, left); err != nil {
		return a, fmt.Errorf("name: %w", err)
	}
	has, err := r.Uint32()
	if err != nil {
		return a, fmt.Errorf("%s: resource flag: %w", a.Name, err)
	}
	if has != 0 {
		a.HasResource = true
		if a.Resource, left, err = budgetStr(r, left); err != nil {
			return a, fmt.Errorf("%s: resource: %w", a.Name, err)
		}
	}
	if a.Value, _, err = budgetStr(r, left); err != nil {
		return a, fmt.Errorf("%s: value: %w", a.FullName(), err)
	}
	op, err := r.Uint32()
	if err != nil {
		return a, fmt.Errorf("%s: op: %w", a.FullName(), err)
	}
	a.Op = int(op)
	return a, nil
}
