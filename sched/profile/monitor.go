package profile

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
)

// WriteSchedule appends one schedule interval to w in the format of the
// MONITOR file sched_priv/schedule (seed 004 §2):
//
//	jobid:task:state:start:duration:level:object:resource:utilization
//
// preceded by a line "::::::::". Every booking gives a line per resource
// it uses: G for the server-wide consumables (object: server, the
// server's name), Q for the queue limits (object: the queue), H for a
// node (resource slots, its virtual processors, then its consumables).
// States are RUNNING, SUSPENDED, STARTING, RESERVING and ADVANCE (an
// advance reservation, its id in place of the job's); the duration is
// the planned one in seconds, INFINITY for a booking without an end. An
// array sub-job 5[3].vm is job 5[].vm, task 3; other jobs are task 1.
func WriteSchedule(w io.Writer, server string, bookings []Booking) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("::::::::\n")
	var line []byte
	for _, b := range bookings {
		job, task := splitTask(b.Job)
		prefix := job + ":" + task + ":" + b.Kind.String() + ":" + strconv.FormatInt(b.Start, 10) + ":"
		if b.End == Forever {
			prefix += "INFINITY:"
		} else {
			prefix += strconv.FormatInt(b.End-b.Start, 10) + ":"
		}
		emit := func(level, object, resource string, amount float64) {
			line = append(line[:0], prefix...)
			line = append(line, level...)
			line = append(line, ':')
			line = append(line, object...)
			line = append(line, ':')
			line = append(line, resource...)
			line = append(line, ':')
			line = strconv.AppendFloat(line, amount, 'f', 6, 64)
			line = append(line, '\n')
			bw.Write(line)
		}
		for _, name := range sortedKeys(b.Global) {
			emit("G", server, name, b.Global[name])
		}
		for _, name := range sortedKeys(b.QueueUse) {
			emit("Q", b.Queue, name, b.QueueUse[name])
		}
		per := sortedKeys(b.PerNode)
		for _, s := range b.Nodes {
			emit("H", s.Node, "slots", float64(s.Slots))
			for _, name := range per {
				emit("H", s.Node, name, b.PerNode[name])
			}
		}
	}
	return bw.Flush()
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// splitTask splits an array sub-job id "5[3].vm" into "5[].vm" and "3".
func splitTask(id string) (job, task string) {
	open := strings.IndexByte(id, '[')
	closing := strings.IndexByte(id, ']')
	if open < 0 || closing < open+2 {
		return id, "1"
	}
	return id[:open+1] + id[closing:], id[open+1 : closing]
}
