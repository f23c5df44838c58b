// Package capture reads the TORQUE protocol captures: libpcap (and pcapng)
// files of loopback or veth traffic, their TCP connections reassembled into
// ordered byte streams, their UDP datagrams, and the manifest.jsonl that
// describes each capture.
//
// A typical use:
//
//	dir, ok := capture.SharedDir()
//	if !ok {
//		t.Skip("shared captures not available")
//	}
//	c, err := capture.ReadFile(filepath.Join(dir, "24-momctl-q-loadave.pcap"))
//	for _, conn := range c.Conns {
//		for _, turn := range conn.Turns() { ... }
//	}
//
// DIS has no message framing, so a TCP connection is exposed as the data
// each side wrote, in capture order (Conn.Chunks), with the helpers
// Conn.Stream (one direction's whole byte stream) and Conn.Turns (adjacent
// chunks of one direction merged: in the lock-step batch protocol a
// direction change delimits a request from its reply).
package capture
