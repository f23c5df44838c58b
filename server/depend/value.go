package depend

import (
	"slices"
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
)

// Entry is one dependency type of a job's depend attribute with its
// arguments: job ids ("id@server"), or a count for on and synccount.
type Entry struct {
	Type string
	Args []string
}

// The dependency types, their properties and their mirrors are attr's
// (attr.DependType); an Entry keeps a type as its name.

// isType reports whether t names a dependency type.
func isType(t string) bool {
	_, ok := pbsattr.LookupDependType(t)
	return ok
}

// Mirror returns the type recorded on the other job of a registration of
// type t (before… for after… and back), or "" when t has none.
func Mirror(t string) string {
	if dt, ok := pbsattr.LookupDependType(t); ok {
		if m, ok := dt.Mirror(); ok {
			return m.String()
		}
	}
	return ""
}

// isCount reports whether t takes a count (on, synccount).
func isCount(t string) bool {
	dt, ok := pbsattr.LookupDependType(t)
	return ok && dt.IsCount()
}

// Parse decodes a depend value a client sent: its syntax and the
// combination rules (spec 12 §6.1) are attr.ParseDepend's. Job ids get
// "@<server>" when they have none. ok is false for a malformed value
// (PBSE_BADATVAL).
func Parse(v, server string) ([]Entry, bool) {
	if v != "" {
		if _, err := pbsattr.ParseDepend(v); err != nil {
			return nil, false
		}
	}
	return ParseRaw(v, server)
}

// ParseRaw decodes a depend value without the combination rules (the
// server's own bookkeeping, e.g. a sync master's members, breaks them).
func ParseRaw(v, server string) ([]Entry, bool) {
	var out []Entry
	if v == "" {
		return nil, true
	}
	seen := map[string]int{}
	for _, part := range strings.Split(v, ",") {
		fields := state.SplitEscaped(part, ':')
		t := strings.ToLower(fields[0])
		if !isType(t) || len(fields) < 2 {
			return nil, false
		}
		e := Entry{Type: t}
		for _, a := range fields[1:] {
			if a == "" {
				return nil, false
			}
			if isCount(t) {
				n, err := strconv.Atoi(a)
				if err != nil || n < 0 || len(fields) != 2 {
					return nil, false
				}
				e.Args = append(e.Args, strconv.Itoa(n))
				continue
			}
			if !strings.Contains(a, "@") {
				if !strings.Contains(a, ".") {
					return nil, false
				}
				a += "@" + server
			}
			e.Args = append(e.Args, a)
		}
		if i, ok := seen[t]; ok {
			out[i].Args = append(out[i].Args, e.Args...)
			continue
		}
		seen[t] = len(out)
		out = append(out, e)
	}
	return out, true
}

// Format encodes deps as a depend value (the inverse of ParseRaw).
func Format(deps []Entry) string {
	var b strings.Builder
	for i, e := range deps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(e.Type)
		for _, a := range e.Args {
			b.WriteByte(':')
			b.WriteString(strings.ReplaceAll(a, ":", "\\:"))
		}
	}
	return b.String()
}

// Of returns the dependencies of job j on server (the server's name).
func Of(j *state.Job, server string) []Entry {
	d, _ := ParseRaw(j.Attrs.Get(pbsattr.JobDepend), server)
	return d
}

// Set sets j's depend attribute to deps, leaving out the types left
// without arguments.
func Set(j *state.Job, deps []Entry) {
	var kept []Entry
	for _, e := range deps {
		if len(e.Args) > 0 {
			kept = append(kept, e)
		}
	}
	j.Attrs.Set(pbsattr.JobDepend, Format(kept))
}

// add records arg under type t on j.
func add(j *state.Job, server, t, arg string) {
	deps := Of(j, server)
	for i := range deps {
		if deps[i].Type == t {
			if !slices.Contains(deps[i].Args, arg) {
				deps[i].Args = append(deps[i].Args, arg)
			}
			Set(j, deps)
			return
		}
	}
	Set(j, append(deps, Entry{Type: t, Args: []string{arg}}))
}

// remove removes arg from type t on j.
func remove(j *state.Job, server, t, arg string) {
	deps := Of(j, server)
	for i := range deps {
		if deps[i].Type == t {
			for k, a := range deps[i].Args {
				if a == arg {
					deps[i].Args = append(deps[i].Args[:k:k], deps[i].Args[k+1:]...)
					break
				}
			}
		}
	}
	Set(j, deps)
}

// Holds reports whether any dependency of j keeps it on system hold
// (spec 12 §6.3).
func Holds(j *state.Job) bool {
	for _, e := range Of(j, "") {
		switch e.Type {
		case "on":
			if n, _ := strconv.Atoi(e.Args[0]); n > 0 {
				return true
			}
		case "after", "afterok", "afternotok", "afterany", "syncwith", "synccount",
			"afterstartarray", "afterokarray", "afternotokarray", "afteranyarray":
			return true
		}
	}
	return false
}

// HasSync reports whether j has a sync dependency (syncwith, synccount).
func HasSync(j *state.Job) bool {
	for _, e := range Of(j, "") {
		if e.Type == "syncwith" || e.Type == "synccount" {
			return true
		}
	}
	return false
}

// arrayThreshold returns the count of an array dependency argument
// "<n>[][<count>].server" (0 = the whole array).
func arrayThreshold(arg string) int {
	i := strings.Index(arg, "][")
	if i < 0 {
		return 0
	}
	rest := arg[i+2:]
	k := strings.IndexByte(rest, ']')
	if k < 0 {
		return 0
	}
	n, _ := strconv.Atoi(rest[:k])
	return n
}

// stripArrayCount turns "21[][2].srv" into "21[].srv".
func stripArrayCount(id string) string {
	i := strings.Index(id, "][")
	if i < 0 {
		return id
	}
	k := strings.IndexByte(id[i+2:], ']')
	if k < 0 {
		return id
	}
	return id[:i+1] + id[i+2+k+1:]
}

// jobPart is the job id of a "id@server" reference.
func jobPart(ref string) string {
	id, _, _ := strings.Cut(ref, "@")
	return id
}
