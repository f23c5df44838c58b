package attr

import "fmt"

// PBSE_* error numbers used by this package. They duplicate a few entries of
// the batchreq package's PBSE table (spec 02 §11) so that attr does not
// import batchreq; the numbers are the ones the server puts in its reply.
const (
	pbseNoAttr     = 15002 // PBSE_NOATTR: unknown attribute name
	pbseAttrRO     = 15003 // PBSE_ATTRRO: read-only or insufficient permission
	pbseIvalReq    = 15004 // PBSE_IVALREQ
	pbsePerm       = 15007 // PBSE_PERM
	pbseBadAtVal   = 15016 // PBSE_BADATVAL: illegal attribute or resource value
	pbseModAtrRun  = 15017 // PBSE_MODATRRUN
	pbseAttrType   = 15028 // PBSE_ATTRTYPE
	pbseUnkResc    = 15037 // PBSE_UNKRESC: unknown resource name
	pbseBadDepend  = 15056 // PBSE_BADDEPEND
	pbseDupList    = 15057 // PBSE_DUPLIST
	pbseBadNdAtVal = 15069 // PBSE_BADNDATVAL: illegal node attribute value
	pbseMutualEx   = 15070 // PBSE_MUTUALEX: mutually exclusive values

	pbseBadDisallowType = 15077 // PBSE_BADDISALLOWTYPE
)

// Error reports why an attribute value or operation was refused. Code is the
// PBSE_* number the server must reply with (for example 15016,
// PBSE_BADATVAL); Name and Resource identify the offending attribute when
// known.
type Error struct {
	Code     int    // PBSE_* error number
	Name     string // attribute name, may be empty
	Resource string // resource name for resource-list attributes, may be empty
	Reason   string // short human-readable detail (not sent on the wire)
}

// Error returns the code, the attribute and the reason.
func (e *Error) Error() string {
	name := e.Name
	if e.Resource != "" {
		name += "." + e.Resource
	}
	if name == "" {
		return fmt.Sprintf("attr: PBSE %d: %s", e.Code, e.Reason)
	}
	return fmt.Sprintf("attr: %s: PBSE %d: %s", name, e.Code, e.Reason)
}

// Code returns the PBSE_* number carried by err if it is (or wraps) an
// *Error, and 0 otherwise.
func Code(err error) int {
	if err == nil {
		return 0
	}
	for err != nil {
		if e, ok := err.(*Error); ok {
			return e.Code
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			break
		}
		err = u.Unwrap()
	}
	return 0
}

func badValue(reason string) *Error { return &Error{Code: pbseBadAtVal, Reason: reason} }

// withName returns err with the attribute (and resource) name filled in when
// err is an *Error without a name.
func withName(err error, name, resource string) error {
	if e, ok := err.(*Error); ok && e.Name == "" {
		c := *e
		c.Name, c.Resource = name, resource
		return &c
	}
	return err
}
