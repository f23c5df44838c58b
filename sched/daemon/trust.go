// This file holds the connection trust rules: the -c file's $clienthost and
// $restricted lines (ReadClientConfig) and the check of an accepted
// connection's peer against them (allowed).

package daemon

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path"
	"strings"
)

// ReadClientConfig reads the -c file: "$clienthost <host>" lines add
// trusted hosts, "$restricted <pattern>" lines add hosts allowed from
// non-reserved ports. localhost and the local host name are always
// trusted.
func (d *Daemon) ReadClientConfig() error {
	trusted := map[netip.Addr]bool{}
	addHost := func(h string) {
		if a, err := netip.ParseAddr(h); err == nil {
			trusted[a.Unmap()] = true
			return
		}
		addrs, _ := net.LookupHost(h)
		for _, s := range addrs {
			if a, err := netip.ParseAddr(s); err == nil {
				trusted[a.Unmap()] = true
			}
		}
	}
	addHost("127.0.0.1")
	addHost("::1")
	addHost("localhost")
	if h, err := os.Hostname(); err == nil {
		addHost(h)
	}
	var restricted []string
	if d.opts.ConfigFile != "" {
		b, err := os.ReadFile(d.opts.ConfigFile)
		if err != nil {
			return fmt.Errorf("read %s: %w", d.opts.ConfigFile, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			switch f[0] {
			case "$clienthost":
				addHost(f[1])
			case "$restricted":
				restricted = append(restricted, f[1])
			}
		}
	}
	d.mu.Lock()
	d.trusted, d.restricted = trusted, restricted
	d.mu.Unlock()
	return nil
}

// allowed applies the connection trust rules; it returns the log text of
// a refusal or "".
func (d *Daemon) allowed(remote net.Addr) string {
	ap, err := netip.ParseAddrPort(remote.String())
	if err != nil {
		return "unauthorized host"
	}
	addr := ap.Addr().Unmap()
	d.mu.Lock()
	defer d.mu.Unlock()
	if ap.Port() >= 1024 {
		if len(d.restricted) == 0 {
			return "non-reserved port"
		}
		match := func(names []string) bool {
			for _, pat := range d.restricted {
				for _, n := range names {
					if ok, _ := path.Match(pat, strings.TrimSuffix(n, ".")); ok {
						return true
					}
				}
			}
			return false
		}
		if match([]string{addr.String()}) {
			return ""
		}
		if hn, err := net.LookupAddr(addr.String()); err == nil && match(hn) {
			return ""
		}
		return "non-reserved port"
	}
	if !d.trusted[addr] {
		return "unauthorized host"
	}
	return ""
}
