package daemon

import (
	"strings"

	"gopbs/internal/logline"
	"gopbs/sched/svrconn"
)

// hello names a scheduler that has a name (Options.Name) to the server
// at the start of a cycle, so that the cycle sees its slice of the
// cluster (issue 18, seed 003). It reports whether the cycle is to be
// skipped: the server did not give the scheduler's attributes, or a
// scheduler other than the default one has no partition.
func (d *Daemon) hello(conn *svrconn.Conn) (skip bool, err error) {
	if d.opts.Name == "" {
		return false, nil // TORQUE's way: the server's default scheduler
	}
	objs, err := conn.SchedHello(d.opts.Name)
	if err != nil || len(objs) != 1 {
		d.Log.Log(logline.EventError, logline.ClassServer, "schedule", "Unable to retrieve the scheduler attributes from server")
		return true, err
	}
	parts := ""
	for _, a := range objs[0].Attrs {
		if a.Name == "partitions" {
			parts = a.Value
		}
	}
	if d.opts.Name != "default" && strings.TrimSpace(parts) == "" {
		d.Log.Log(logline.EventSystem, logline.ClassServer, "schedule", "Scheduler does not contain a partition")
		return true, nil
	}
	d.Log.Log(logline.EventDebug2, logline.ClassServer, "schedule", "Scheduler "+d.opts.Name+" schedules partitions "+parts)
	return false, nil
}
