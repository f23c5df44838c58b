package attr

import (
	"strconv"
	"strings"
)

// ResourceRequest is one resource of a client's resource list (qsub and
// qalter -l), sent as the entry Resource_List.<Name> = Value.
type ResourceRequest struct {
	Name  string
	Value string
}

// ParseResourceRequests splits a -l list, name[=value][,name=value…], the
// way qsub and qalter do (spec 04 §9): a value may be enclosed in ' or "
// to include commas (the quotes are removed); walltime=A-B becomes
// minwclimit=A followed by walltime=B; a procs=N part inside a nodes spec
// is moved into a separate procs resource after nodes. Values are not
// checked here: the server checks them with the resource's type. An empty
// name or an unterminated quote is PBSE_BADATVAL.
func ParseResourceRequests(list string) ([]ResourceRequest, error) {
	var out []ResourceRequest
	bad := func(why string) ([]ResourceRequest, error) {
		return nil, badValue("bad resource list " + strconv.Quote(list) + ": " + why)
	}
	for len(list) > 0 {
		var name, value string
		i := strings.IndexAny(list, "=,")
		if i < 0 {
			name, list = list, ""
		} else {
			name = list[:i]
			sep := list[i]
			list = list[i+1:]
			if sep == '=' {
				if len(list) > 0 && (list[0] == '"' || list[0] == '\'') {
					end := strings.IndexByte(list[1:], list[0])
					if end < 0 {
						return bad("unterminated quote")
					}
					value, list = list[1:1+end], list[2+end:]
					if len(list) > 0 && list[0] != ',' {
						return bad("text after a quoted value")
					}
				} else if j := strings.IndexByte(list, ','); j >= 0 {
					value, list = list[:j], list[j:]
				} else {
					value, list = list, ""
				}
				list = strings.TrimPrefix(list, ",")
			}
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return bad("empty resource name")
		}
		switch {
		case strings.EqualFold(name, ResWalltime) && strings.Contains(value, "-"):
			lo, hi, _ := strings.Cut(value, "-")
			out = append(out, ResourceRequest{Name: "minwclimit", Value: lo}, ResourceRequest{Name: name, Value: hi})
		case strings.EqualFold(name, ResNodes) && strings.Contains(value, "procs="):
			spec, procs := extractProcs(value)
			out = append(out, ResourceRequest{Name: name, Value: spec})
			if procs != "" {
				out = append(out, ResourceRequest{Name: ResProcs, Value: procs})
			}
		default:
			out = append(out, ResourceRequest{Name: name, Value: value})
		}
	}
	return out, nil
}

// extractProcs removes the ":procs=N" parts of a node spec and returns the
// remaining spec and the last N.
func extractProcs(spec string) (rest, procs string) {
	var b strings.Builder
	for k, el := range strings.Split(spec, "+") {
		if k > 0 {
			b.WriteByte('+')
		}
		for j, part := range strings.Split(el, ":") {
			if n, ok := strings.CutPrefix(part, "procs="); ok && j > 0 {
				procs = n
				continue
			}
			if j > 0 {
				b.WriteByte(':')
			}
			b.WriteString(part)
		}
	}
	return b.String(), procs
}
