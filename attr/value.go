package attr

import (
	"strconv"
	"strings"
	"unique"
)

// Type is the value type of an attribute or resource (spec 04 §1). It
// decides how text is decoded and encoded, compared and combined.
type Type uint8

// Value types. TypeNone marks an unset Value.
const (
	TypeNone         Type = iota // no value (the zero Value)
	TypeLong                     // signed decimal integer
	TypeLongLong                 // signed 64-bit decimal integer (nodemask, pagg_id)
	TypeBool                     // True/False
	TypeChar                     // a single character (job_state, queue_type of a job)
	TypeString                   // verbatim string
	TypeStringArray              // comma list of strings (Variable_List, Mail_Users, ...)
	TypeACL                      // string array with ACL matching (acl_hosts, managers, ...)
	TypeSize                     // number with k/m/g/t/p multiplier and b/w unit
	TypeTime                     // [[[D:]H:]M:]S[.f], encoded HH:MM:SS
	TypeHold                     // Hold_Types letters n/u/o/s
	TypeDepend                   // job dependency list (spec 04 §5.6)
	TypeResourceList             // Resource_List and friends; values live per resource
	TypeNodeState                // node state words (spec 04 §8.1)
	TypeNodeType                 // cluster / time-shared
	TypeInteractive              // long (qsub's port) reported to clients as True/False
	TypeQueueType                // Execution / Route, any case-insensitive prefix accepted
	TypeNodeSpec                 // the nodes resource: string checked against the node-spec syntax
	TypeOther                    // unknown attribute kept verbatim
	numTypes
)

var typeNames = [numTypes]string{
	TypeNone: "none", TypeLong: "long", TypeLongLong: "long long", TypeBool: "boolean",
	TypeChar: "char", TypeString: "string", TypeStringArray: "string array",
	TypeACL: "acl", TypeSize: "size", TypeTime: "time", TypeHold: "hold",
	TypeDepend: "depend", TypeResourceList: "resource list", TypeNodeState: "node state",
	TypeNodeType: "node type", TypeInteractive: "interactive", TypeQueueType: "queue type",
	TypeNodeSpec: "node spec", TypeOther: "other",
}

// String returns the type's name.
func (t Type) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// Flags are the per-value state bits of TORQUE's attribute flag word; they
// are stored with every value and written to the persistence records
// (spec 13 §2.1).
type Flags uint8

// Value flags.
const (
	FlagSet     Flags = 0x01 // value is set (ATR_VFLAG_SET)
	FlagModify  Flags = 0x02 // value changed since the last save (ATR_VFLAG_MODIFY)
	FlagDefault Flags = 0x04 // value came from a default (ATR_VFLAG_DEFLT); sent to MOM with op DFLT
	FlagSend    Flags = 0x08 // value must be sent to the MOM/scheduler (ATR_VFLAG_SEND)
)

// Mode selects which text form Encode produces.
type Mode uint8

// Encoding modes.
const (
	ModeClient Mode = iota // status replies to clients (qstat, qmgr, pbsnodes)
	ModeServer             // privileged peers: other servers, the scheduler
	ModeMOM                // QueueJob to a MOM (interactive keeps its port number)
	ModeSave               // persistence records: string arrays are newline-terminated
)

// Value is one decoded attribute or resource value. The zero Value is unset.
// Values are small (32 bytes) and immutable; copy them freely.
//
// Storage by type: numbers, booleans, times (seconds), hold and node-state
// bits live in an int64; sizes keep their number and unit unnormalised;
// strings, characters, dependency lists and string arrays keep their
// canonical encoded text (string arrays: elements escaped and joined by
// ","), so encoding a value for a status reply does not allocate.
type Value struct {
	s     string
	n     int64
	typ   Type
	aux   uint8 // size: shift/10 in the low bits, sizeWords for word units
	flags Flags
	// Resource entries of a Set also record which attribute and resource
	// they belong to; these fields use the struct's padding.
	ra uint8  // attribute number
	rd uint16 // resource definition number
}

// IsSet reports whether v holds a value.
func (v Value) IsSet() bool { return v.typ != TypeNone }

// Type returns the value's type (TypeNone when unset).
func (v Value) Type() Type { return v.typ }

// Flags returns the value's flag bits.
func (v Value) Flags() Flags { return v.flags }

// WithFlags returns v with its flag bits replaced by f (FlagSet is kept for
// set values).
func (v Value) WithFlags(f Flags) Value {
	if v.typ != TypeNone {
		f |= FlagSet
	} else {
		f &^= FlagSet
	}
	v.flags = f
	return v
}

// Int returns the numeric content of long, long long, boolean (0/1), time
// (seconds), hold bits, node-state bits, node type and interactive values.
func (v Value) Int() int64 { return v.n }

// Bool returns the value of a boolean (any non-zero number is true).
func (v Value) Bool() bool { return v.n != 0 }

// Str returns the stored text of string, char, depend, queue type, node
// spec and other values, and the canonical comma-joined encoding of string
// arrays and ACLs. It is empty for numeric types.
func (v Value) Str() string { return v.s }

// Seconds returns the value of a time value in seconds.
func (v Value) Seconds() int64 { return v.n }

// Size returns the value of a size value.
func (v Value) Size() Size {
	return Size{Num: uint64(v.n), Shift: (v.aux & sizeShiftMask) * 10, Words: v.aux&sizeWords != 0}
}

// Elements returns the elements of a string array or ACL value.
func (v Value) Elements() []string { return splitEscaped(v.s) }

// Len returns the number of elements of a string array or ACL value.
func (v Value) Len() int { return countElements(v.s) }

// Constructors.

// LongValue returns a long value.
func LongValue(n int64) Value { return Value{typ: TypeLong, n: n, flags: FlagSet} }

// BoolValue returns a boolean value.
func BoolValue(b bool) Value {
	v := Value{typ: TypeBool, flags: FlagSet}
	if b {
		v.n = 1
	}
	return v
}

// StringValue returns a string value.
func StringValue(s string) Value { return Value{typ: TypeString, s: s, flags: FlagSet} }

// CharValue returns a char value.
func CharValue(c byte) Value { return Value{typ: TypeChar, s: charString(c), flags: FlagSet} }

// TimeValue returns a time value of secs seconds.
func TimeValue(secs int64) Value { return Value{typ: TypeTime, n: secs, flags: FlagSet} }

// SizeValue returns a size value.
func SizeValue(sz Size) Value {
	v := Value{typ: TypeSize, n: int64(sz.Num), aux: (sz.Shift / 10) & sizeShiftMask, flags: FlagSet}
	if sz.Words {
		v.aux |= sizeWords
	}
	return v
}

// HoldValue returns a Hold_Types value with the given hold bits.
func HoldValue(bits HoldBits) Value { return Value{typ: TypeHold, n: int64(bits), flags: FlagSet} }

// NodeStateValue returns a node state value.
func NodeStateValue(st NodeState) Value {
	return Value{typ: TypeNodeState, n: int64(st), flags: FlagSet}
}

// ArrayValue returns a string array value holding elems (which are stored
// unescaped; the encoding escapes them).
func ArrayValue(elems []string) Value {
	if len(elems) == 0 {
		return Value{}
	}
	return Value{typ: TypeStringArray, s: joinEscaped(elems), flags: FlagSet}
}

// OtherValue returns a verbatim value of an unknown attribute.
func OtherValue(s string) Value { return Value{typ: TypeOther, s: s, flags: FlagSet} }

// storage groups the types whose values are stored alike and may be
// converted into each other without re-encoding.
func (t Type) storage() int {
	switch t {
	case TypeLong, TypeLongLong, TypeInteractive:
		return 1
	case TypeStringArray, TypeACL:
		return 2
	case TypeString, TypeOther, TypeNodeSpec:
		return 3
	}
	return 10 + int(t) // only the type itself
}

// as converts v to type t when both store their content alike (long, long
// long and interactive; string array and ACL; string, other and node
// spec); other values keep their own type.
func (v Value) as(t Type) Value {
	if v.typ != TypeNone && v.typ.storage() == t.storage() {
		v.typ = t
	}
	return v
}

// maxIntern is the length up to which values of shared attributes are
// interned.
const maxIntern = 128

// intern returns the canonical copy of s (see unique.Make), so that the
// many jobs with the same queue, owner, host or option letters share one
// string.
func intern(s string) string {
	if s == "" || len(s) > maxIntern {
		return s
	}
	return unique.Make(s).Value()
}

// charString returns the one-byte string c (one-byte strings are static in
// the Go runtime and cost no allocation).
func charString(c byte) string { return string([]byte{c}) }

// Parse decodes text as a value of type t with TORQUE's acceptance rules.
// String-valued results may refer to text itself; pass a string that does
// not pin a larger buffer.
// An empty text yields the unset Value and no error for every type: a
// request that sets an attribute to "" unsets it. Errors are *Error values
// carrying the PBSE code (PBSE_BADATVAL for malformed text).
func Parse(t Type, text string) (Value, error) {
	if text == "" {
		return Value{}, nil
	}
	var v Value
	var err error
	switch t {
	case TypeLong, TypeInteractive:
		var n int64
		n, err = parseLong(text)
		v = Value{n: n}
	case TypeLongLong:
		var n int64
		n, err = parseLong(text)
		v = Value{n: n}
	case TypeBool:
		var b bool
		b, err = parseBool(text)
		v = BoolValue(b)
	case TypeChar:
		v = CharValue(text[0])
	case TypeString:
		v = StringValue(text)
	case TypeOther:
		v = Value{s: text}
	case TypeStringArray, TypeACL:
		joined := joinEscaped(parseArray(text))
		if joined == "" {
			return Value{}, nil
		}
		v = Value{s: joined}
	case TypeSize:
		var sz Size
		sz, err = ParseSize(text)
		v = SizeValue(sz)
	case TypeTime:
		var secs int64
		secs, err = ParseTime(text)
		v = Value{n: secs}
	case TypeHold:
		var h HoldBits
		h, err = ParseHold(text)
		v = Value{n: int64(h)}
	case TypeDepend:
		var deps []Dependency
		deps, err = ParseDepend(text)
		v = Value{s: FormatDepend(deps)}
	case TypeNodeState:
		var st NodeState
		st, err = ParseNodeState(text)
		v = Value{n: int64(st)}
	case TypeNodeType:
		var nt int64
		nt, err = parseNodeType(text)
		v = Value{n: nt}
	case TypeQueueType:
		var qt string
		qt, err = parseQueueType(text)
		v = Value{s: qt}
	case TypeNodeSpec:
		_, err = ParseNodeSpec(text)
		v = Value{s: text}
	default:
		return Value{}, &Error{Code: pbseAttrType, Reason: "attribute of type " + t.String() + " has no text form"}
	}
	if err != nil {
		return Value{}, err
	}
	v.typ, v.flags = t, FlagSet
	return v, nil
}

// String returns the client text form of v (Encode with ModeClient).
func (v Value) String() string { return v.Encode(ModeClient) }

// Encode returns the text form of v for the given mode: the exact text the
// server puts in a status reply (ModeClient/ModeServer), in a QueueJob to a
// MOM (ModeMOM), or in a persistence record (ModeSave). An unset value
// encodes as "".
func (v Value) Encode(m Mode) string {
	switch v.typ {
	case TypeNone:
		return ""
	case TypeLong, TypeLongLong:
		return strconv.FormatInt(v.n, 10)
	case TypeInteractive:
		if m == ModeClient {
			return formatBool(v.n != 0)
		}
		return strconv.FormatInt(v.n, 10)
	case TypeBool:
		return formatBool(v.n != 0)
	case TypeStringArray, TypeACL:
		if m == ModeSave {
			return saveArray(v.s)
		}
		return v.s
	case TypeSize:
		return v.Size().String()
	case TypeTime:
		return FormatTime(v.n)
	case TypeHold:
		return HoldBits(v.n).String()
	case TypeNodeState:
		return NodeState(v.n).String()
	case TypeNodeType:
		return formatNodeType(v.n)
	default:
		return v.s
	}
}

// AppendEncode appends the encoding of v to dst.
func (v Value) AppendEncode(dst []byte, m Mode) []byte {
	switch v.typ {
	case TypeLong, TypeLongLong:
		return strconv.AppendInt(dst, v.n, 10)
	case TypeTime:
		return appendTime(dst, v.n)
	}
	return append(dst, v.Encode(m)...)
}

// reportable reports whether a set value produces a status entry: string-like
// values with empty text are omitted (spec 04 §1), everything else is
// reported when set. Hold_Types is reported even when its letters are empty
// (only internal holds set).
func (v Value) reportable() bool {
	switch v.typ {
	case TypeNone:
		return false
	case TypeString, TypeOther, TypeStringArray, TypeACL, TypeDepend, TypeChar, TypeQueueType, TypeNodeSpec:
		return v.s != ""
	}
	return true
}

// Equal reports whether v and w have the same type and content (flags are
// ignored).
func (v Value) Equal(w Value) bool {
	return v.typ == w.typ && v.n == w.n && v.s == w.s && v.aux == w.aux
}

func parseLong(text string) (int64, error) {
	s := text
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, badValue("not a decimal integer: " + strconv.Quote(text))
	}
	var n uint64
	overflow := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, badValue("not a decimal integer: " + strconv.Quote(text))
		}
		if n > (1<<63)/10 {
			overflow = true
		}
		n = n*10 + uint64(c-'0')
		if n > 1<<63 {
			overflow = true
		}
	}
	// Like strtol, out-of-range values saturate.
	switch {
	case overflow && neg:
		return -1 << 63, nil
	case overflow, !neg && n == 1<<63:
		return 1<<63 - 1, nil
	case neg:
		return -int64(n), nil
	}
	return int64(n), nil
}

func parseBool(text string) (bool, error) {
	switch strings.ToLower(text) {
	case "true", "t", "1", "y":
		return true, nil
	case "false", "f", "0", "n":
		return false, nil
	}
	return false, badValue("not a boolean: " + strconv.Quote(text))
}

func formatBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func parseNodeType(text string) (int64, error) {
	switch text {
	case "cluster":
		return 0, nil
	case "time-shared":
		return 1, nil
	}
	return 0, &Error{Code: pbseBadNdAtVal, Reason: "unknown node type " + strconv.Quote(text)}
}

func formatNodeType(n int64) string {
	if n == 1 {
		return "time-shared"
	}
	return "cluster"
}

// Queue types as reported in queue_type.
const (
	QueueTypeExecution = "Execution"
	QueueTypeRoute     = "Route"
)

func parseQueueType(text string) (string, error) {
	l := strings.ToLower(text)
	switch {
	case strings.HasPrefix("execution", l):
		return QueueTypeExecution, nil
	case strings.HasPrefix("route", l):
		return QueueTypeRoute, nil
	}
	return "", badValue("unknown queue type " + strconv.Quote(text))
}
