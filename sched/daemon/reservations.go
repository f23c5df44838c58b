package daemon

import (
	"errors"
	"fmt"
	"slices"

	"gopbs/internal/logline"
	"gopbs/resv"
	"gopbs/sched/svrconn"
	"gopbs/sched/world"
)

// readReservations asks a server that has reservation queues (R<n>) for
// its advance reservations. Only GoPBS's server has them: no request is
// added to a TORQUE server's conversation. A server that refuses the
// request leaves the cycle without reservations.
func (d *Daemon) readReservations(conn *svrconn.Conn, queues []*world.Queue) ([]*resv.Reservation, error) {
	if !slices.ContainsFunc(queues, func(q *world.Queue) bool { _, err := resv.ParseID(q.Name); return err == nil && q.Name[0] == 'R' }) {
		return nil, nil
	}
	objs, err := conn.ResvStatus()
	if err != nil {
		var re *svrconn.ReplyError
		if errors.As(err, &re) {
			d.Log.Log(logline.EventError, logline.ClassServer, "reservations", re.Error())
			return nil, nil
		}
		return nil, fmt.Errorf("status reservations: %w", err)
	}
	var out []*resv.Reservation
	for _, o := range objs {
		attrs := o.Attrs
		r, err := resv.FromAttrs(o.Name, func(name string) (string, bool) {
			for _, a := range attrs {
				if a.Name == name {
					return a.Value, true
				}
			}
			return "", false
		})
		if err != nil {
			d.Log.Log(logline.EventError, logline.ClassServer, "reservations", err.Error())
			continue
		}
		out = append(out, r)
	}
	return out, nil
}
