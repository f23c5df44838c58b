package rpp

import (
	"bytes"
	"path/filepath"
	"testing"

	"gopbs/internal/capture"
)

// TestCapturedDatagrams parses every UDP datagram of every capture: each
// must be an RPP packet with a correct CRC and a payload size its type
// allows, and rebuilding it from the parsed fields must give the captured
// bytes. Joining the fragments must never find a sequence gap.
func TestCapturedDatagrams(t *testing.T) {
	dir, ok := capture.SharedDir()
	if !ok {
		t.Skip("shared captures directory (../shared/captures from the module root) not available")
	}
	files, err := capture.PcapFiles(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in %s: %v", dir, err)
	}
	var datagrams, messages int
	types := map[Type]int{}
	for _, f := range files {
		c, err := capture.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var asm Assembler
		for _, d := range c.Datagrams {
			datagrams++
			p, err := Parse(d.Payload)
			if err != nil {
				t.Errorf("%s frame %d: %v", filepath.Base(f), d.Frame, err)
				continue
			}
			types[p.Type]++
			if err := p.Check(); err != nil {
				t.Errorf("%s frame %d: %v", filepath.Base(f), d.Frame, err)
			}
			if got := p.Marshal(); !bytes.Equal(got, d.Payload) {
				t.Errorf("%s frame %d: rebuilt %q, captured %q", filepath.Base(f), d.Frame, got, d.Payload)
			}
			res := asm.Add(d.Src, d.Dst, p)
			if res.Lost != 0 {
				t.Errorf("%s frame %d: %d packets lost before %v", filepath.Base(f), d.Frame, res.Lost, p)
			}
			if res.Message != nil {
				messages++
			}
		}
	}
	t.Logf("%d datagrams, %d messages, types %v", datagrams, messages, types)
	for _, typ := range []Type{RPP_ACK, RPP_EOD, RPP_HELLO1, RPP_HELLO2, RPP_GOODBYE} {
		if types[typ] == 0 {
			t.Errorf("no %s packet in the captures", typ)
		}
	}
}
