// Package dis implements DIS ("Data Is Strings"), the wire encoding of every
// TORQUE batch, RPP and resource-monitor message.
//
// A DIS message is a sequence of items with no outer framing: unsigned and
// signed integers written as self-describing digit groups, and counted
// strings. The Reader decodes items from a stream exactly as TORQUE 2.5.13
// accepts them, including the tolerated non-canonical forms; the Writer
// emits only the canonical forms that every TORQUE encoder produces.
package dis

// Error is a DIS-layer error. Its values mirror the DIS_* codes of the
// original library; they never travel on the wire but decide how a server
// answers a request it could not decode (see the batchreq package).
type Error int

// The DIS error codes, with the numbers of the original library.
const (
	ErrOverflow Error = 1  // DIS_OVERFLOW
	ErrHugeVal  Error = 2  // DIS_HUGEVAL
	ErrBadSign  Error = 3  // DIS_BADSIGN
	ErrLeadZero Error = 4  // DIS_LEADZRO
	ErrNonDigit Error = 5  // DIS_NONDIGIT
	ErrNullStr  Error = 6  // DIS_NULLSTR
	ErrEOD      Error = 7  // DIS_EOD
	ErrNoMalloc Error = 8  // DIS_NOMALLOC
	ErrProto    Error = 9  // DIS_PROTO
	ErrNoCommit Error = 10 // DIS_NOCOMMIT
	ErrEOF      Error = 11 // DIS_EOF
)

var errorText = [...]string{
	0:           "No error",
	ErrOverflow: "Input value too large to convert to this type",
	ErrHugeVal:  "Tried to write floating point infinity",
	ErrBadSign:  "Negative sign on an unsigned datum",
	ErrLeadZero: "Input count or value has leading zero",
	ErrNonDigit: "Non-digit found where a digit was expected",
	ErrNullStr:  "Input string has an embedded ASCII NUL",
	ErrEOD:      "Premature end of message",
	ErrNoMalloc: "Unable to malloc enough space for string",
	ErrProto:    "Supporting protocol failure",
	ErrNoCommit: "Protocol failure in commit",
	ErrEOF:      "End of File",
}

// Error returns the library's message text for the code, e.g.
// "Premature end of message".
func (e Error) Error() string {
	if e >= 0 && int(e) < len(errorText) {
		return errorText[e]
	}
	return "unknown DIS error"
}

// Code returns the numeric DIS_* code.
func (e Error) Code() int { return int(e) }
