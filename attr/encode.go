package attr

import "strconv"

// Entry is one attribute-list entry produced from a Set, ready to be put
// in a status reply, a QueueJob to a MOM or a persistence record.
type Entry struct {
	Name        string
	Resource    string
	HasResource bool
	Value       string
	Flags       Flags // the value's flags (FlagDefault → op DFLT towards MOMs)
}

// EncodeOptions selects the entries AppendEntries produces.
type EncodeOptions struct {
	// Mode selects the text form of the values.
	Mode Mode
	// Access is the requester's permission level; attributes and resources
	// it may not read are omitted. Ignored when All is set.
	Access Access
	// PrivRead allows PRIVR attributes (Variable_List): the requester owns
	// the job or is an operator or manager.
	PrivRead bool
	// All includes every set attribute regardless of read permission
	// (persistence).
	All bool
	// SkipDefault omits resources carrying FlagDefault (persistence).
	SkipDefault bool
	// Filter, if not nil, must return true for an attribute to be
	// included (e.g. FlagMOM attributes for a MOM QueueJob).
	Filter func(*Def) bool
	// After, if not nil, is called after each attribute's entries (even
	// when the attribute produced none) and may append pseudo-attributes,
	// e.g. Walltime.Remaining after start_time.
	After func(dst []Entry, i int) []Entry
}

// AppendEntries appends the entries of every set attribute to dst, in
// definition order, followed by the unknown (verbatim) attributes; this is
// the full StatusJob/StatusQueue/StatusServer/StatusNode reply order.
func (s *Set) AppendEntries(dst []Entry, o *EncodeOptions) []Entry {
	for i := range s.table.defs {
		dst = s.AppendAttr(dst, i, o)
		if o.After != nil {
			dst = o.After(dst, i)
		}
	}
	if o.Filter == nil {
		for _, x := range s.other {
			dst = append(dst, Entry{Name: x.Name, Resource: x.Resource, HasResource: x.HasResc, Value: x.Value, Flags: FlagSet})
		}
	}
	return dst
}

// Status returns the entries of a full status reply for a requester with
// access a; privRead allows PRIVR attributes.
func (s *Set) Status(a Access, privRead bool) []Entry {
	return s.AppendEntries(make([]Entry, 0, len(s.vals)+len(s.res)+len(s.other)), &EncodeOptions{Access: a, PrivRead: privRead})
}

// AppendAttr appends the entries of attribute i (one per readable
// resource for resource lists) to dst, if it is set, readable and
// reportable. Use it to answer a status request naming attributes.
func (s *Set) AppendAttr(dst []Entry, i int, o *EncodeOptions) []Entry {
	d := &s.table.defs[i]
	if o.Filter != nil && !o.Filter(d) {
		return dst
	}
	if !o.All && (!d.Readable(o.Access) || d.Flags&FlagPrivRead != 0 && !o.PrivRead && o.Access&AccessPrivileged == 0) {
		return dst
	}
	if d.Type == TypeResourceList {
		for rd, v := range s.Resources(i) {
			if rd.Flags&FlagNoReport != 0 || o.SkipDefault && v.flags&FlagDefault != 0 ||
				o.Mode == ModeMOM && rd.Flags&FlagNoMOM != 0 {
				continue
			}
			if !o.All && !rd.Readable(o.Access) {
				continue
			}
			dst = append(dst, Entry{Name: d.Name, Resource: rd.Name, HasResource: true, Value: v.Encode(o.Mode), Flags: v.flags})
		}
		return dst
	}
	v := s.Get(i)
	if !v.IsSet() {
		if d.Flags&FlagAlwaysRep != 0 && d.Default != "" && o.Mode != ModeSave {
			return append(dst, Entry{Name: d.Name, Value: d.Default})
		}
		return dst
	}
	if !v.reportable() {
		return dst
	}
	return append(dst, Entry{Name: d.Name, Value: v.Encode(o.Mode), Flags: v.flags})
}

// WalltimeRemaining returns the Walltime.Remaining pseudo-attribute of a
// job (spec 04 §3.1): present only while job_state is R and
// Resource_List.walltime is set; the value is walltime − (now −
// start_time) seconds printed as an unsigned 64-bit number, so an overrun
// wraps to a huge value as in TORQUE.
func (s *Set) WalltimeRemaining(now int64) (Entry, bool) {
	if s.table.Object != ObjJob || s.Get(JobState).Str() != "R" {
		return Entry{}, false
	}
	wt := s.ResourceByName(JobResourceList, ResWalltime)
	if !wt.IsSet() {
		return Entry{}, false
	}
	rem := wt.Seconds() - (now - s.Get(JobStartTime).Int())
	return Entry{Name: "Walltime", Resource: "Remaining", HasResource: true,
		Value: strconv.FormatUint(uint64(rem), 10)}, true
}

// AppendJobStatus appends a job's full StatusJob entry list for a
// requester with access a (privRead: owner, operator or manager), with
// Walltime.Remaining computed for time now after start_time.
func (s *Set) AppendJobStatus(dst []Entry, a Access, privRead bool, now int64) []Entry {
	return s.AppendEntries(dst, &EncodeOptions{Access: a, PrivRead: privRead,
		After: func(dst []Entry, i int) []Entry {
			if i == JobStartTime {
				if e, ok := s.WalltimeRemaining(now); ok {
					dst = append(dst, e)
				}
			}
			return dst
		}})
}

// AppendMOM appends the attribute list of the QueueJob the server sends to
// a job's MOM (spec 10 §6.2): the MOM-flagged attributes in definition
// order in ModeMOM (interactive keeps its port number), without nodect and
// procct, plus session_id when checkpoint_name is set (a restart). Entries
// whose value carries FlagDefault must be sent with op DFLT.
func (s *Set) AppendMOM(dst []Entry) []Entry {
	restart := s.Has(JobCheckpointName)
	return s.AppendEntries(dst, &EncodeOptions{Mode: ModeMOM, All: true,
		Filter: func(d *Def) bool {
			return d.Flags&FlagMOM != 0 || restart && d.index == JobSessionID
		}})
}

// AppendSave appends the records of a persistence file (spec 13 §2):
// every set attribute in definition order in ModeSave, except resources
// that came from a default and ACL attributes (which live in their own
// files).
func (s *Set) AppendSave(dst []Entry) []Entry {
	return s.AppendEntries(dst, &EncodeOptions{Mode: ModeSave, All: true, SkipDefault: true,
		Filter: func(d *Def) bool { return d.Type != TypeACL }})
}
