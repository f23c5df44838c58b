package link

import (
	"context"
	"time"

	"gopbs/internal/logline"
	"gopbs/mom/momlog"
	"gopbs/mom/sysinfo"
)

// healthCheckTimeout bounds one run of $node_check_script.
const healthCheckTimeout = 5 * time.Minute

// runHealthCheck runs $node_check_script (spec 10 §5.7, interpreted by
// sysinfo.RunHealthCheck): an ERROR line becomes the node message and
// marks the MOM down, an EVENT: line becomes the message only. It
// reports whether the MOM is down afterwards.
func (m *Mom) runHealthCheck(ctx context.Context) bool {
	script := m.conf().NodeCheckScript
	if script == "" {
		return false
	}
	res, err := sysinfo.RunHealthCheck(ctx, script, healthCheckTimeout)
	if err != nil {
		m.logErr("check_state", err, "")
	}
	m.mu.Lock()
	changed := m.down != res.Down
	m.message, m.down = res.Message, res.Down
	m.mu.Unlock()
	if changed && res.Down {
		m.log.Record(logline.EventSystem, momlog.ClassNode, "check_state", "node health check failed: "+res.Message)
	}
	return res.Down
}

// statusCycle is called before each IS_STATUS: the health check runs
// every $node_check_interval status cycles.
func (m *Mom) statusCycle(ctx context.Context) {
	if m.conf().NodeCheckScript == "" {
		return
	}
	every := m.conf().NodeCheckInterval
	if every <= 0 {
		every = 1
	}
	m.mu.Lock()
	m.cycles++
	due := (m.cycles-1)%every == 0
	m.mu.Unlock()
	if due {
		m.runHealthCheck(ctx)
	}
}

// reportedDown reports whether status says state=down: the MOM is down
// and $down_on_error is set.
func (m *Mom) reportedDown() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.down && m.conf().DownOnError
}
