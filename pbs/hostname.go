package pbs

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// lookupTimeout bounds each name service query of FullHostName, so that
// an unreachable DNS server cannot stall a command.
const lookupTimeout = 3 * time.Second

// FullHostName returns the fully qualified, lower-cased name of host as
// TORQUE's clients compute it for job ids (spec 05 §1.1): the host is
// resolved to an address (forward lookup) and the address back to its
// primary name (reverse lookup). When the reverse lookup gives nothing the
// name as written is kept. A name mapped by the $HOSTALIASES file (see
// ResolveHost) is its own full name: the alias file names the host, its
// target is only where to reach it. An error means the name cannot be
// resolved at all.
func FullHostName(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("resolving host name: empty name")
	}
	if hostAlias(host) != "" {
		return strings.ToLower(host), nil
	}
	ips, err := ResolveHost(host)
	if err != nil {
		return "", fmt.Errorf("resolving host name %q: %w", host, err)
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("resolving host name %q: no address", host)
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	names, err := net.DefaultResolver.LookupAddr(ctx, ips[0].String())
	if err == nil {
		for _, n := range names {
			if n = strings.TrimSuffix(n, "."); n != "" {
				return strings.ToLower(n), nil
			}
		}
	}
	return strings.ToLower(host), nil
}
