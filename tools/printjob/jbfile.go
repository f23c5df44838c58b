package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"gopbs/jobfile"
)

const rule = "---------------------------------------------------\n"

// print writes the job as TORQUE's printjob does (the layout of the
// capture's "printjob 2.vm.JB"): the fixed part, then every attribute as
// "name[.resource] = value". With noAttrs only the fixed part is printed.
func printTorqueJob(w io.Writer, j *jobfile.Job, noAttrs bool) {
	var b strings.Builder
	fmt.Fprintf(&b, "%sjobid:\t%s\n%s", rule, j.ID, rule)
	fmt.Fprintf(&b, "ji_qs version:\t0x%08x\n", j.Version)
	fmt.Fprintf(&b, "state:\t\t0x%x\n", j.State)
	fmt.Fprintf(&b, "substate:\t0x%x (%d)\n", j.Substate, j.Substate)
	fmt.Fprintf(&b, "svrflgs:\t0x%x (%d)\n", j.Svrflags, j.Svrflags)
	fmt.Fprintf(&b, "ordering:\t%d\n", j.Ordering)
	fmt.Fprintf(&b, "inter prior:\t%d\n", j.Priority)
	fmt.Fprintf(&b, "stime:\t\t%d\n", j.Stime)
	fmt.Fprintf(&b, "file base:\t%s\n", j.Prefix)
	fmt.Fprintf(&b, "queue:\t\t%s\n", j.Queue)
	fmt.Fprintf(&b, "destin:\t\t%s\n", j.Destin)
	le := binary.LittleEndian
	u := j.Union[:]
	switch j.UnType {
	case jobfile.UnionNew:
		fmt.Fprintf(&b, "union type new:\n\tfromsock\t%d\n\tfromaddr\t%s\n\tscriptsz\t%d\n",
			int32(le.Uint32(u[8:])), ipv4(le.Uint64(u[0:])), int32(le.Uint32(u[12:])))
	case jobfile.UnionExec:
		fmt.Fprintf(&b, "union type exec:\n\tmomaddr\t%d\n\texits\t%d\n", le.Uint64(u[0:]), int32(le.Uint32(u[8:])))
	case jobfile.UnionRoute:
		fmt.Fprintf(&b, "union type route:\n\tquetime\t%d\n\tretry\t%d\n", int64(le.Uint64(u[0:])), int64(le.Uint64(u[8:])))
	case jobfile.UnionMom:
		fmt.Fprintf(&b, "union type mom:\n\tsvraddr\t%d\n\texitst\t%d\n\tuid\t%d\n\tgid\t%d\n",
			le.Uint64(u[0:]), int32(le.Uint32(u[8:])), le.Uint32(u[12:]), le.Uint32(u[16:]))
	default:
		fmt.Fprintf(&b, "union type %d: unknown\n", j.UnType)
	}
	if !noAttrs {
		b.WriteString("--attributes--\n")
		for _, a := range j.Attrs {
			writeAttr(&b, a.Name, a.Resource, a.Value)
		}
		if tm, ok := j.TM(); ok {
			fmt.Fprintf(&b, "--mom tm info--\nstdout\t%d\nstderr\t%d\ntaskid\t%d\nnodeid\t%d\n",
				tm.Stdout, tm.Stderr, tm.NextTaskID, tm.NodeID)
		}
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

// ipv4 formats an address kept in host order in a 64-bit field.
func ipv4(v uint64) string {
	return fmt.Sprintf("%d.%d.%d.%d", byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// writeAttr writes the line "name[.resource] = value" of an attribute
// list (no resource part when resource is empty).
func writeAttr(b *strings.Builder, name, resource, value string) {
	b.WriteString(name)
	if resource != "" {
		b.WriteString(".")
		b.WriteString(resource)
	}
	b.WriteString(" = ")
	b.WriteString(value)
	b.WriteString("\n")
}
