package capture

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead checks that reading arbitrary bytes as a capture never panics
// and that reassembly keeps its invariants.
func FuzzRead(f *testing.F) {
	f.Add(writePcap(&testing.T{}, []seg{
		{fromClient: true, syn: true, seq: 1},
		{fromClient: true, ack: true, seq: 2, data: "+2+1"},
		{ack: true, seq: 9, data: "reply"},
		{udp: true, fromClient: true, data: "udp"},
	}))
	if dir, ok := SharedDir(); ok {
		for _, name := range []string{"24-momctl-q-loadave.pcap", "01-qstat-B.pcap"} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, conn := range c.Conns {
			next := [2]int64{}
			for _, ch := range conn.Chunks {
				d := 1
				if ch.FromClient {
					d = 0
				}
				if ch.Offset < next[d] || len(ch.Data) == 0 {
					t.Fatalf("chunk at offset %d (%d bytes) after %d", ch.Offset, len(ch.Data), next[d])
				}
				next[d] = ch.Offset + int64(len(ch.Data))
			}
			_ = conn.Turns()
		}
	})
}
