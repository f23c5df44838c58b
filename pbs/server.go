package pbs

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultHome is the compiled-in PBS home directory (TORQUE's
// PBS_SERVER_HOME); the environment variable PBS_HOME overrides it. Builds
// may set it with -ldflags "-X gopbs/pbs.DefaultHome=/path".
var DefaultHome = "/var/spool/torque"

// DefaultPort is the compiled-in batch service port, used when neither the
// server string nor $PBS_BATCH_SERVICE_PORT names one. Builds may set it
// with -ldflags "-X gopbs/pbs.DefaultPort=15001".
var DefaultPort = "15001"

// Home returns the PBS home directory: $PBS_HOME or DefaultHome.
func Home() string {
	if h := os.Getenv("PBS_HOME"); h != "" {
		return h
	}
	return DefaultHome
}

// ServerList returns the default server list as TORQUE builds it:
// $PBS_DEFAULT, else $PBS_SERVER, else the lines of <home>/server_name
// joined with commas. It is "" when none is configured.
func ServerList() string {
	if s := os.Getenv("PBS_DEFAULT"); s != "" {
		return s
	}
	if s := os.Getenv("PBS_SERVER"); s != "" {
		return s
	}
	return ServerNameFile(Home())
}

// ServerNameFile returns the server list kept in <home>/server_name: its
// non-blank lines joined with commas, "" when there is no such file.
func ServerNameFile(home string) string {
	f, err := os.Open(filepath.Join(home, "server_name"))
	if err != nil {
		return ""
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			names = append(names, line)
		}
	}
	return strings.Join(names, ",")
}

// DefaultServer returns the first entry of the default server list
// (pbs_default), "" if there is none.
func DefaultServer() string {
	first, _, _ := strings.Cut(ServerList(), ",")
	return strings.TrimSpace(first)
}

// FallbackServer returns the second entry of the default server list
// (pbs_fbserver), "" if there is none.
func FallbackServer() string {
	list := strings.Split(ServerList(), ",")
	if len(list) < 2 {
		return ""
	}
	return strings.TrimSpace(list[1])
}

// defaultPort is the batch port for server strings without ":port":
// $PBS_BATCH_SERVICE_PORT if set, else 15001.
func defaultPort() int {
	if p, err := strconv.Atoi(os.Getenv("PBS_BATCH_SERVICE_PORT")); err == nil && p > 0 && p < 65536 {
		return p
	}
	if p, err := strconv.Atoi(DefaultPort); err == nil && p > 0 && p < 65536 {
		return p
	}
	return 15001
}

// SplitServer splits "host[:port]" into the host and the port, using the
// default batch port when none is written.
func SplitServer(s string) (host string, port int) {
	host, ps, ok := strings.Cut(s, ":")
	if ok {
		if p, err := strconv.Atoi(ps); err == nil && p > 0 && p < 65536 {
			return host, p
		}
	}
	return host, defaultPort()
}

// ResolveHost returns the IPv4 addresses of a host name. Like the C
// resolver it honours a HOSTALIASES file (lines "alias name") for the
// name's first component-free form, which lets tests and sites map a
// server name such as "vm" to a reachable host without touching
// /etc/hosts. The aliases are ignored in setuid programs.
func ResolveHost(host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	if target := hostAlias(host); target != "" {
		host = target
		if ip := net.ParseIP(host); ip != nil {
			return []net.IP{ip}, nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	var v4 []net.IP
	for _, a := range addrs {
		if a4 := a.To4(); a4 != nil {
			v4 = append(v4, a4)
		}
	}
	if len(v4) == 0 {
		return addrs, nil
	}
	return v4, nil
}

// hostAlias looks name up in the $HOSTALIASES file.
func hostAlias(name string) string {
	path := os.Getenv("HOSTALIASES")
	if path == "" || strings.Contains(name, ".") || os.Getuid() != os.Geteuid() {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.EqualFold(f[0], name) {
			return f[1]
		}
	}
	return ""
}
