package pbs

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// TorqueConfig is the content of <PBS home>/torque.cfg: one "NAME value"
// setting a line, '#' starting a comment (spec 05 §1.5). Names are kept
// upper-cased.
type TorqueConfig map[string]string

// ReadTorqueConfig reads <home>/torque.cfg; a missing or unreadable file is
// an empty configuration, as for TORQUE.
func ReadTorqueConfig(home string) TorqueConfig {
	cfg := TorqueConfig{}
	data, err := os.ReadFile(filepath.Join(home, "torque.cfg"))
	if err != nil {
		return cfg
	}
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		cfg[strings.ToUpper(f[0])] = strings.Join(f[1:], " ")
	}
	return cfg
}

// Bool interprets a setting as a boolean: true, yes, on, t, y or 1 in any
// case. A missing setting is false.
func (c TorqueConfig) Bool(name string) bool {
	switch strings.ToLower(c[name]) {
	case "true", "yes", "1", "on", "t", "y":
		return true
	}
	return false
}

// IsFalse reports whether a setting is present and false (false, no,
// off, f, n or 0), for options whose default is on.
func (c TorqueConfig) IsFalse(name string) bool {
	v, ok := c[name]
	if !ok {
		return false
	}
	switch strings.ToLower(v) {
	case "false", "no", "0", "off", "f", "n":
		return true
	}
	return false
}

// interfaceAddr returns the first IPv4 address of the network interface
// named ifname, the local address TRQ_IFNAME asks connections to use.
func interfaceAddr(ifname string) (*net.TCPAddr, error) {
	ifc, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("TRQ_IFNAME %s: %w", ifname, err)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return nil, fmt.Errorf("TRQ_IFNAME %s: %w", ifname, err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			return &net.TCPAddr{IP: ipn.IP.To4()}, nil
		}
	}
	return nil, fmt.Errorf("TRQ_IFNAME %s: interface has no IPv4 address", ifname)
}
