package attr

import (
	"strconv"
	"strings"
)

// DependType is a dependency type of the depend attribute (spec 12 §6.1);
// the numbers are TORQUE's internal ones.
type DependType uint8

// Dependency types.
const (
	DependAfter DependType = iota
	DependAfterOK
	DependAfterNotOK
	DependAfterAny
	DependBefore
	DependBeforeOK
	DependBeforeNotOK
	DependBeforeAny
	DependOn
	DependSyncWith
	DependSyncCount
	DependAfterStartArray
	DependAfterOKArray
	DependAfterNotOKArray
	DependAfterAnyArray
	DependBeforeStartArray
	DependBeforeOKArray
	DependBeforeNotOKArray
	DependBeforeAnyArray
	numDependTypes
)

var dependNames = [numDependTypes]string{
	"after", "afterok", "afternotok", "afterany",
	"before", "beforeok", "beforenotok", "beforeany",
	"on", "syncwith", "synccount",
	"afterstartarray", "afterokarray", "afternotokarray", "afteranyarray",
	"beforestartarray", "beforeokarray", "beforenotokarray", "beforeanyarray",
}

// String returns the type's name as written in depend values.
func (t DependType) String() string {
	if t < numDependTypes {
		return dependNames[t]
	}
	return "DependType(" + strconv.Itoa(int(t)) + ")"
}

// IsArray reports whether t is one of the *array types.
func (t DependType) IsArray() bool { return t >= DependAfterStartArray && t < numDependTypes }

// IsCount reports whether t takes a count (on, synccount) instead of jobs.
func (t DependType) IsCount() bool { return t == DependOn || t == DependSyncCount }

// IsAfter reports whether t is one of after, afterok, afternotok, afterany.
func (t DependType) IsAfter() bool { return t <= DependAfterAny }

// IsBefore reports whether t is one of before, beforeok, beforenotok, beforeany.
func (t DependType) IsBefore() bool { return t >= DependBefore && t <= DependBeforeAny }

// Mirror returns the type recorded on the other job of a registration
// (spec 12 §6.2): before… for after… and after… for before…, the array
// types alike (afterokarray ↔ beforeokarray). ok is false for on,
// syncwith and synccount, which have no mirror.
func (t DependType) Mirror() (m DependType, ok bool) {
	switch {
	case t.IsAfter(), t >= DependAfterStartArray && t <= DependAfterAnyArray:
		return t + 4, true
	case t.IsBefore(), t >= DependBeforeStartArray && t <= DependBeforeAnyArray:
		return t - 4, true
	}
	return t, false
}

// LookupDependType returns the type named name.
func LookupDependType(name string) (DependType, bool) {
	for i, n := range dependNames {
		if n == name {
			return DependType(i), true
		}
	}
	return 0, false
}

// DependJob is one job of a dependency: its id and, if known, the server
// that owns it.
type DependJob struct {
	ID     string
	Server string
}

// Dependency is one type of a depend attribute with its jobs (or its count
// for on and synccount).
type Dependency struct {
	Type  DependType
	Count int64
	Jobs  []DependJob
}

// ParseDepend decodes a depend value, in the client form
// type:jobid[:jobid…][,type:…] or the server form with @server after job
// ids and \: escapes. Entries of the same type are merged. The combination
// rules of spec 12 §6.1 apply; violations, unknown types, missing arguments
// and job ids with neither a '.' nor a server are PBSE_BADATVAL.
func ParseDepend(text string) ([]Dependency, error) {
	bad := func(why string) ([]Dependency, error) {
		return nil, badValue("bad dependency " + strconv.Quote(text) + ": " + why)
	}
	var deps []Dependency
	for _, entry := range strings.Split(text, ",") {
		parts := splitColon(entry)
		if len(parts) < 2 {
			return bad("missing argument")
		}
		t, ok := LookupDependType(parts[0])
		if !ok {
			return bad("unknown type " + strconv.Quote(parts[0]))
		}
		var d Dependency
		d.Type = t
		if t.IsCount() {
			if len(parts) != 2 {
				return bad("one count expected")
			}
			n, err := strconv.ParseInt(parts[1], 10, 64)
			if err != nil || n < 0 {
				return bad("bad count")
			}
			d.Count = n
		} else {
			for _, a := range parts[1:] {
				id, server, _ := strings.Cut(a, "@")
				if id == "" || (server == "" && !strings.Contains(id, ".")) {
					return bad("bad job id " + strconv.Quote(a))
				}
				d.Jobs = append(d.Jobs, DependJob{ID: id, Server: server})
			}
		}
		merged := false
		for i := range deps {
			if deps[i].Type == t && !t.IsCount() && t != DependSyncWith {
				deps[i].Jobs = append(deps[i].Jobs, d.Jobs...)
				merged = true
				break
			}
		}
		if !merged {
			deps = append(deps, d)
		}
	}
	if err := checkDependCombination(deps); err != "" {
		return bad(err)
	}
	return deps, nil
}

func checkDependCombination(deps []Dependency) string {
	var syncwith, synccount, afterOrOn, array, plain int
	for _, d := range deps {
		switch {
		case d.Type == DependSyncWith:
			syncwith++
			if len(d.Jobs) != 1 {
				return "syncwith takes one job"
			}
		case d.Type == DependSyncCount:
			synccount++
		case d.Type.IsAfter() || d.Type == DependOn:
			afterOrOn++
		}
		if d.Type.IsArray() {
			array++
		} else {
			plain++
		}
	}
	switch {
	case syncwith > 1:
		return "more than one syncwith"
	case syncwith > 0 && (synccount > 0 || afterOrOn > 0):
		return "syncwith combined with synccount, after or on"
	case synccount > 1:
		return "more than one synccount"
	case array > 0 && plain > 0:
		return "array and non-array dependencies mixed"
	}
	return ""
}

// splitColon splits s at unescaped ':' and removes the escapes of "\:".
func splitColon(s string) []string {
	if !strings.Contains(s, `\`) {
		return strings.Split(s, ":")
	}
	var parts []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == ':':
			b.WriteByte(':')
			i++
		case s[i] == ':':
			parts = append(parts, b.String())
			b.Reset()
		default:
			b.WriteByte(s[i])
		}
	}
	return append(parts, b.String())
}

func appendColonEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return b
}

// FormatDepend returns the server encoding of deps: entries joined by ",",
// each type followed by ":jobid[@server]" per job (':' escaped as "\:") or
// by ":count".
func FormatDepend(deps []Dependency) string {
	var b []byte
	for i, d := range deps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, d.Type.String()...)
		if d.Type.IsCount() {
			b = append(b, ':')
			b = strconv.AppendInt(b, d.Count, 10)
			continue
		}
		for _, j := range d.Jobs {
			b = append(b, ':')
			b = appendColonEscaped(b, j.ID)
			if j.Server != "" {
				b = append(b, '@')
				b = appendColonEscaped(b, j.Server)
			}
		}
	}
	return string(b)
}

// DependValue returns a depend value holding deps.
func DependValue(deps []Dependency) Value {
	if len(deps) == 0 {
		return Value{}
	}
	return Value{typ: TypeDepend, s: FormatDepend(deps), flags: FlagSet}
}

// SetDefaultServer fills in server for every job of deps that names none,
// the way the server completes a dependency given by qsub (afterok:1.vm
// becomes afterok:1.vm@vm).
func SetDefaultServer(deps []Dependency, server string) {
	for i := range deps {
		for j := range deps[i].Jobs {
			if deps[i].Jobs[j].Server == "" {
				deps[i].Jobs[j].Server = server
			}
		}
	}
}
