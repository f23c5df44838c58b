package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gopbs/internal/capture"
)

// FuzzDump feeds arbitrary bytes through the whole dissector: reading,
// reassembly, classification, decoding and every output form must never
// panic.
func FuzzDump(f *testing.F) {
	if dir, ok := capture.SharedDir(); ok {
		for _, name := range []string{"24-momctl-q-loadave.pcap", "01-qstat-B.pcap", "105-multinode-job-pbsdsh.pcap"} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := capture.Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		var st Stats
		var out bytes.Buffer
		for _, m := range Dump(c) {
			st.add(m)
			_ = Line(m)
			if _, err := JSON(m); err != nil {
				t.Fatal(err)
			}
			if err := Verbose(&out, m); err != nil {
				t.Fatal(err)
			}
		}
		if st.UndecodedBytes < 0 || st.Errors < 0 {
			t.Fatalf("negative counters %v", st)
		}
	})
}
