package link

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"time"

	"gopbs/mom/momlog"
)

// healthCheckTimeout bounds one run of $node_check_script.
const healthCheckTimeout = 5 * time.Minute

// runHealthCheck runs $node_check_script (spec 10 §5.7): a line of its
// output beginning with ERROR becomes the node message and marks the MOM
// down; a line beginning with EVENT: becomes the message without marking
// it down. It reports whether the MOM is down afterwards.
func (m *Mom) runHealthCheck(ctx context.Context) bool {
	script := m.conf().NodeCheckScript
	if script == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, healthCheckTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, script).Output()
	if err != nil && len(out) == 0 {
		m.logErr("check_state", err, "node check script "+script)
	}
	message, down := "", false
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "ERROR") {
			message, down = line, true
			break
		}
		if strings.HasPrefix(line, "EVENT:") && message == "" {
			message = line
		}
	}
	m.mu.Lock()
	changed := m.down != down
	m.message, m.down = message, down
	m.mu.Unlock()
	if changed && down {
		m.log.Record(momlog.EventSystem, momlog.ClassNode, "check_state", "node health check failed: "+message)
	}
	return down
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
