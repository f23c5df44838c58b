package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Ports below the kernel's ephemeral range are never handed out as the
// local port of an outgoing connection, so a port found free there stays
// free until the daemon under test binds it (unless another test takes
// it). FreePorts picks from [portLow, portHigh), lowered to below the
// ephemeral range when that starts lower.
const (
	portLow  = 20000
	portHigh = 32000
)

// handedOut holds the ports FreePorts returned in this test binary, so
// that tests running in parallel get different ones even before their
// daemons bind them.
var handedOut = struct {
	mu    sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// FreePorts returns n distinct ports that are free for TCP and UDP on
// every address (as daemons bind them), below the kernel's ephemeral
// range and not returned before in this test binary. The test fails when
// there are not enough.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	low, high := portRange()
	ports, err := freePorts(n, low, high)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// FreePort returns one port as FreePorts does.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

func freePorts(n int, low, high int) ([]int, error) {
	handedOut.mu.Lock()
	defer handedOut.mu.Unlock()
	var ports []int
	for try := 0; len(ports) < n; try++ {
		if try > 1000+100*n {
			return nil, fmt.Errorf("no %d free ports in [%d, %d)", n, low, high)
		}
		port := low + rand.IntN(high-low)
		if handedOut.ports[port] || !portFree(port) {
			continue
		}
		handedOut.ports[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}

// portFree reports whether port can be bound for TCP and UDP on every
// address.
func portFree(port int) bool {
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	ln.Close()
	pc, err := net.ListenPacket("udp", ":"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	pc.Close()
	return true
}

// portRange returns the range FreePorts picks from: [portLow, portHigh),
// cut below the ephemeral range of /proc/sys/net/ipv4/ip_local_port_range.
func portRange() (low, high int) {
	b, _ := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	return pickRange(string(b))
}

// pickRange returns the range FreePorts picks from given the contents of
// ip_local_port_range ("32768\t60999\n"; empty or malformed: the
// default).
func pickRange(ephemeral string) (low, high int) {
	low, high = portLow, portHigh
	f := strings.Fields(ephemeral)
	if len(f) != 2 {
		return low, high
	}
	first, err := strconv.Atoi(f[0])
	if err != nil {
		return low, high
	}
	if first < high {
		high = first
	}
	if high-low < 1000 { // the ephemeral range starts low: use what is left below it, or the default
		if first > 2000 {
			return 1024, first
		}
		return portLow, portHigh
	}
	return low, high
}
