package cli

import (
	"gopbs/pbs"
)

// TorqueConfig reads <PBS home>/torque.cfg (see pbs.ReadTorqueConfig).
func TorqueConfig() pbs.TorqueConfig {
	return pbs.ReadTorqueConfig(pbs.Home())
}
