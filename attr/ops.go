package attr

import (
	"cmp"
	"strings"
)

// Op is a batch operation (batch_op, spec 02 §2.2).
type Op int

// Batch operations.
const (
	OpSet     Op = 0  // SET
	OpUnset   Op = 1  // UNSET
	OpIncr    Op = 2  // INCR
	OpDecr    Op = 3  // DECR
	OpEQ      Op = 4  // EQ
	OpNE      Op = 5  // NE
	OpGE      Op = 6  // GE
	OpGT      Op = 7  // GT
	OpLE      Op = 8  // LE
	OpLT      Op = 9  // LT
	OpDflt    Op = 10 // DFLT (internal; sent to MOMs for defaulted values)
	OpMerge   Op = 11 // MERGE (internal)
	OpIncrOld Op = 12 // INCR_OLD: what qmgr sends for +=
)

// normalize maps an operation to the set-type operation the server
// performs: INCR_OLD behaves like INCR, anything else but SET, UNSET, INCR
// and DECR like SET.
func (op Op) normalize() Op {
	switch op {
	case OpSet, OpUnset, OpIncr, OpDecr:
		return op
	case OpIncrOld:
		return OpIncr
	}
	return OpSet
}

// Combine returns the result of applying op with operand to old, following
// the set rules of spec 04/12: SET replaces, UNSET clears, INCR adds
// (numbers, sizes and times add; strings concatenate; booleans, hold and
// node-state bits are or-ed in; string arrays gain the elements they do
// not already hold) and DECR subtracts (string arrays and ACLs lose the
// given elements; bits are cleared). INCR_OLD is INCR; other ops are SET.
// old may be unset; the result keeps old's flags plus FlagModify.
func Combine(old, operand Value, op Op) (Value, error) {
	op = op.normalize()
	switch op {
	case OpUnset:
		return Value{}, nil
	case OpSet:
		return operand, nil
	}
	if !operand.IsSet() {
		return old, nil
	}
	t := operand.typ
	if old.IsSet() && old.typ != t {
		return Value{}, &Error{Code: pbseAttrType, Reason: "operand type " + t.String() + " does not match " + old.typ.String()}
	}
	r := operand
	switch t {
	case TypeLong, TypeLongLong, TypeTime, TypeInteractive:
		if op == OpIncr {
			r.n = old.n + operand.n
		} else {
			r.n = old.n - operand.n
		}
	case TypeChar:
		var c byte
		if old.IsSet() && old.s != "" {
			c = old.s[0]
		}
		if op == OpIncr {
			c += operand.s[0]
		} else {
			c -= operand.s[0]
		}
		r = CharValue(c)
	case TypeSize:
		switch {
		case !old.IsSet() && op == OpIncr:
			r = operand
		case !old.IsSet():
			r = SizeValue(Size{Shift: operand.Size().Shift, Words: operand.Size().Words})
		case op == OpIncr:
			r = SizeValue(old.Size().Add(operand.Size()))
		default:
			r = SizeValue(old.Size().Sub(operand.Size()))
		}
	case TypeBool, TypeHold, TypeNodeState:
		if op == OpIncr {
			r.n = old.n | operand.n
		} else {
			r.n = old.n &^ operand.n
		}
	case TypeString, TypeOther:
		if op == OpIncr {
			r.s = old.s + operand.s
		} else {
			r.s = strings.Replace(old.s, operand.s, "", 1)
		}
	case TypeStringArray, TypeACL:
		elems := old.Elements()
		if op == OpIncr {
			for _, e := range operand.Elements() {
				if !contains(elems, e) {
					elems = append(elems, e)
				}
			}
		} else {
			del := operand.Elements()
			kept := elems[:0]
			for _, e := range elems {
				if !contains(del, e) {
					kept = append(kept, e)
				}
			}
			elems = kept
		}
		if len(elems) == 0 {
			return Value{}, nil
		}
		r.s = joinEscaped(elems)
	default:
		// depend, queue type, node type, node spec: only SET makes sense.
		return operand, nil
	}
	r.flags = old.flags | FlagSet
	return r, nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// Compare orders a and b for Select relations and resource limit checks.
// It returns the sign of a−b and ok=false when the values have different
// types or the type has no meaningful order beyond equality (then the
// result only tells equal (0) or not (1)): booleans, hold bits, node
// states, string arrays and dependencies. Numbers, times and sizes
// (compared in bytes) are ordered; strings and chars compare bytewise.
func Compare(a, b Value) (int, bool) {
	if a.typ != b.typ {
		return 1, false
	}
	switch a.typ {
	case TypeLong, TypeLongLong, TypeTime, TypeInteractive, TypeNodeType:
		return cmp.Compare(a.n, b.n), true
	case TypeSize:
		return a.Size().Cmp(b.Size()), true
	case TypeString, TypeChar, TypeOther, TypeQueueType, TypeNodeSpec:
		return strings.Compare(a.s, b.s), true
	case TypeStringArray, TypeACL:
		// Equal when every element of b is in a (TORQUE's array compare).
		elems := a.Elements()
		for _, e := range b.Elements() {
			if !contains(elems, e) {
				return 1, false
			}
		}
		return 0, false
	}
	if a.n == b.n && a.s == b.s {
		return 0, false
	}
	return 1, false
}

// Matches reports whether the relation "a op b" holds, for the Select ops
// EQ, NE, GE, GT, LE, LT. Ordering relations on types without an order are
// false.
func Matches(a Value, op Op, b Value) bool {
	c, ordered := Compare(a, b)
	switch op {
	case OpEQ:
		return c == 0
	case OpNE:
		return c != 0
	}
	if !ordered {
		return false
	}
	switch op {
	case OpGE:
		return c >= 0
	case OpGT:
		return c > 0
	case OpLE:
		return c <= 0
	case OpLT:
		return c < 0
	}
	return false
}
