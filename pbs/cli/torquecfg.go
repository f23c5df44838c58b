package cli

import (
	"os"
	"path/filepath"
	"strings"

	"gopbs/pbs"
)

// TorqueConfig reads <PBS home>/torque.cfg: one "NAME value" per line, '#'
// starting a comment. Names are returned upper-cased; a missing file is an
// empty configuration.
func TorqueConfig() map[string]string {
	cfg := map[string]string{}
	data, err := os.ReadFile(filepath.Join(pbs.Home(), "torque.cfg"))
	if err != nil {
		return cfg
	}
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		name, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		if name == "" {
			continue
		}
		cfg[strings.ToUpper(name)] = strings.TrimSpace(value)
	}
	return cfg
}

// CfgBool interprets a torque.cfg value as a boolean (true, yes, 1, on).
func CfgBool(v string) bool {
	switch strings.ToLower(v) {
	case "true", "yes", "1", "on", "t", "y":
		return true
	}
	return false
}
