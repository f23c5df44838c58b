package state

import (
	"strconv"
	"strings"
)

// Slot is one virtual processor of a job's exec_host ("host/N").
type Slot struct {
	Host string
	VP   int
}

// ExecSlots parses an exec_host value ("host/N+host/N"), skipping
// malformed entries.
func ExecSlots(v string) []Slot {
	if v == "" {
		return nil
	}
	var out []Slot
	for _, e := range strings.Split(v, "+") {
		h, n, ok := strings.Cut(e, "/")
		vp, err := strconv.Atoi(n)
		if !ok || err != nil {
			continue
		}
		out = append(out, Slot{Host: h, VP: vp})
	}
	return out
}

// FormatExecHost formats slots as an exec_host value.
func FormatExecHost(slots []Slot) string {
	var b strings.Builder
	for i, x := range slots {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(x.Host + "/" + strconv.Itoa(x.VP))
	}
	return b.String()
}

// MotherSuperior returns the first host of an exec_host value: the host
// whose MOM runs the job.
func MotherSuperior(execHost string) string {
	if i := strings.IndexAny(execHost, "/+:"); i >= 0 {
		return execHost[:i]
	}
	return execHost
}
