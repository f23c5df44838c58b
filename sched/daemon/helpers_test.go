package daemon

import (
	"io"
	"time"

	"gopbs/sched/schedlog"
)

func newBufLogger(w io.Writer, at time.Time) *schedlog.Logger {
	l := schedlog.NewWriter(w)
	l.SetClock(func() time.Time { return at })
	return l
}
