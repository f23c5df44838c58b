package capture

import (
	"fmt"
	"path/filepath"
	"testing"
)

func sharedOrSkip(t *testing.T) string {
	t.Helper()
	dir, ok := SharedDir()
	if !ok {
		t.Skip("shared captures directory (../shared/captures from the module root) not available")
	}
	return dir
}

// TestAgainstManifest checks that every capture's TCP connections match the
// manifest's tcp_streams hints: same count, ports and byte counts.
func TestAgainstManifest(t *testing.T) {
	dir := sharedOrSkip(t)
	scenarios, err := ReadManifest(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) == 0 {
		t.Fatal("empty manifest")
	}
	var extra, pty, port, mainT int
	for _, s := range scenarios {
		extra += len(s.ExtraCommands)
		pty += len(s.PtyTranscript)
		if s.QsubListenPort != 0 {
			port++
		}
		if s.MainCommandT != nil {
			mainT++
		}
	}
	if extra == 0 || pty == 0 || port == 0 || mainT == 0 {
		t.Errorf("round-2 fields not decoded: extra_commands %d, pty_transcript %d, qsub_listen_port %d, main_command_t %d",
			extra, pty, port, mainT)
	}
	for _, s := range scenarios {
		t.Run(s.Pcap, func(t *testing.T) {
			c, err := ReadFile(filepath.Join(dir, s.Pcap))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Conns) != len(s.TCPStreams) {
				t.Fatalf("%d connections, manifest lists %d", len(c.Conns), len(s.TCPStreams))
			}
			for i, h := range s.TCPStreams {
				conn := c.Conns[i]
				got := fmt.Sprintf("%d->%d c2s=%d s2c=%d", conn.Client.Port(), conn.Server.Port(),
					len(conn.Stream(true)), len(conn.Stream(false)))
				want := fmt.Sprintf("%d->%d c2s=%d s2c=%d", h.Client, h.Server, h.BytesC2S, h.BytesS2C)
				if got != want {
					t.Errorf("stream %d: got %s, manifest %s", i, got, want)
				}
				if conn.MissingC2S != 0 || conn.MissingS2C != 0 {
					t.Errorf("stream %d: missing bytes %d/%d", i, conn.MissingC2S, conn.MissingS2C)
				}
			}
		})
	}
}
