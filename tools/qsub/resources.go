package main

import (
	"strings"

	"gopbs/pbs"
)

// expandResources applies qsub's own rewrites of -l resources (spec 04
// §9): a walltime range "A-B" becomes minwclimit=A followed by
// walltime=B, and a ":procs=N" part of a nodes spec is taken out of it
// and sent as a procs resource of its own right after nodes.
func expandResources(list []pbs.Attr) []pbs.Attr {
	var out []pbs.Attr
	for _, r := range list {
		switch r.Resource {
		case "walltime":
			if lo, hi, ok := strings.Cut(r.Value, "-"); ok && lo != "" && hi != "" {
				out = append(out, resource("minwclimit", lo), resource("walltime", hi))
				continue
			}
		case "nodes":
			if nodes, procs, ok := cutProcs(r.Value); ok {
				out = append(out, resource("nodes", nodes), resource("procs", procs))
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// cutProcs finds the first ":procs=<digits>" part of a nodes spec and
// returns the spec without it and the number.
func cutProcs(spec string) (nodes, procs string, ok bool) {
	const key = ":procs="
	for from := 0; ; {
		i := strings.Index(spec[from:], key)
		if i < 0 {
			return spec, "", false
		}
		start := from + i
		end := start + len(key)
		for end < len(spec) && spec[end] >= '0' && spec[end] <= '9' {
			end++
		}
		if end > start+len(key) && (end == len(spec) || spec[end] == ':' || spec[end] == '+') {
			return spec[:start] + spec[end:], spec[start+len(key) : end], true
		}
		from = start + 1
	}
}

func resource(name, value string) pbs.Attr {
	return pbs.Attr{Name: "Resource_List", Resource: name, Value: value}
}
