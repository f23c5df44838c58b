package attr_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopbs/attr"
	"gopbs/internal/capture"
	"gopbs/internal/capture/capturetest"
)

// printedValue is one "name[.resource] = value" line of a client's output.
type printedValue struct {
	obj            attr.Object
	name, resource string
	value          string
	where          string
}

var (
	objHeader   = regexp.MustCompile(`^(Job Id|Queue|Server|Node):? (\S+)$`)
	attrLine    = regexp.MustCompile(`^\s+([A-Za-z_]\w*)(?:\.(\w+))? = (.*)$`)
	qmgrSetLine = regexp.MustCompile(`^set (server|queue \S+|node \S+) ([A-Za-z_]\w*)(?:\.(\w+))? = (.*)$`)
	moreAssign  = regexp.MustCompile(`, ([a-z_]+) = `)
)

// printedValues extracts the attribute values printed by qstat -f/-Bf/-Qf,
// qmgr list/print and pbsnodes -a, undoing the clients' line folding.
func printedValues(cmd []string, stdout, where string) []printedValue {
	prog := filepath.Base(cmd[0])
	args := strings.Join(cmd[1:], " ")
	full := prog == "qstat" && strings.Contains(args, "f") && strings.HasPrefix(args, "-")
	if !(full || prog == "qmgr" || prog == "pbsnodes" && strings.Contains(args, "-a")) {
		return nil
	}
	var out []printedValue
	obj := attr.Object(-1)
	if prog == "pbsnodes" {
		obj = attr.ObjNode
	}
	lines := strings.Split(stdout, "\n")
	for k := 0; k < len(lines); k++ {
		line := lines[k]
		if m := objHeader.FindStringSubmatch(line); m != nil {
			obj = map[string]attr.Object{"Job Id": attr.ObjJob, "Queue": attr.ObjQueue, "Server": attr.ObjServer, "Node": attr.ObjNode}[m[1]]
			continue
		}
		if m := qmgrSetLine.FindStringSubmatch(line); m != nil {
			o := map[string]attr.Object{"server": attr.ObjServer, "queue": attr.ObjQueue, "node": attr.ObjNode}[strings.Fields(m[1])[0]]
			// qmgr echoes input such as "set queue q enabled = true, started = true".
			name, resc, rest := m[2], m[3], m[4]
			for {
				loc := moreAssign.FindStringSubmatchIndex(rest)
				if loc == nil {
					break
				}
				out = append(out, printedValue{obj: o, name: name, resource: resc, value: rest[:loc[0]], where: where})
				name, resc, rest = rest[loc[2]:loc[3]], "", rest[loc[1]:]
			}
			out = append(out, printedValue{obj: o, name: name, resource: resc, value: rest, where: where})
			continue
		}
		m := attrLine.FindStringSubmatch(line)
		if m == nil || obj < 0 {
			continue
		}
		v := printedValue{obj: obj, name: m[1], resource: m[2], value: m[3], where: where}
		// Continuation lines: qstat -f folds with "\n\t", qmgr list
		// with a newline and blanks.
		for k+1 < len(lines) && lines[k+1] != "" && !attrLine.MatchString(lines[k+1]) &&
			(lines[k+1][0] == '\t' || strings.HasPrefix(lines[k+1], "          ")) {
			k++
			v.value += strings.TrimLeft(lines[k], " \t")
		}
		out = append(out, v)
	}
	return out
}

// clientFormatted lists attributes the clients print in another form than
// the server sent (dates) and pseudo-attributes.
func clientFormatted(v printedValue) bool {
	switch v.name {
	case "ctime", "mtime", "qtime", "etime", "start_time", "comp_time", "Execution_Time", "checkpoint_time":
		return true
	case "Walltime":
		return true
	}
	return false
}

func tableOf(o attr.Object) *attr.Table {
	switch o {
	case attr.ObjJob:
		return attr.JobTable()
	case attr.ObjQueue:
		return attr.QueueTable()
	case attr.ObjServer:
		return attr.ServerTable()
	case attr.ObjNode:
		return attr.NodeTable()
	}
	return nil
}

// TestManifestPrintedValues parses every attribute value the captured
// client commands printed and requires the server encoding of the decoded
// value to reproduce the printed text.
func TestManifestPrintedValues(t *testing.T) {
	scenarios, err := capture.ReadManifest(filepath.Join(capturetest.Dir(t), capture.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var values []printedValue
	for _, sc := range scenarios {
		if len(sc.Argv) > 0 {
			values = append(values, printedValues(sc.Argv, sc.Stdout, sc.Pcap)...)
		}
		for _, x := range sc.ExtraCommands {
			if len(x.Argv) > 0 {
				values = append(values, printedValues(x.Argv, x.Stdout, sc.Pcap+" extra")...)
			}
		}
	}
	checked := 0
	for _, v := range values {
		if clientFormatted(v) {
			continue
		}
		tab := tableOf(v.obj)
		d, ok := tab.Lookup(v.name)
		if !ok {
			t.Errorf("%s: unknown %s attribute %q", v.where, v.obj, v.name)
			continue
		}
		typ := d.Type
		if typ == attr.TypeResourceList {
			rd, ok := tab.Resources().Lookup(v.resource)
			if !ok {
				t.Errorf("%s: unknown resource %s.%s", v.where, v.name, v.resource)
				continue
			}
			typ = rd.Type
		}
		if typ == attr.TypeQueueType && v.value != "Execution" && v.value != "Route" {
			// qmgr echoes its own input ("queue_type = execution").
			pv, err := attr.Parse(typ, v.value)
			if err != nil || pv.String() == "" {
				t.Errorf("%s: %s = %q: %v", v.where, v.name, v.value, err)
			}
			continue
		}
		pv, err := attr.Parse(typ, v.value)
		if err != nil {
			t.Errorf("%s: %s.%s = %q: %v", v.where, v.name, v.resource, v.value, err)
			continue
		}
		if got := pv.Encode(attr.ModeClient); got != v.value && !(typ == attr.TypeBool && strings.EqualFold(got, v.value)) {
			t.Errorf("%s: %s.%s = %q encodes as %q", v.where, v.name, v.resource, v.value, got)
		}
		checked++
	}
	t.Logf("checked %d printed values", checked)
	if checked < 100 {
		t.Errorf("only %d printed values found", checked)
	}
}
