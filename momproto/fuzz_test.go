package momproto

import (
	"bytes"
	"testing"
)

// The fuzz targets check that the decoders never panic, and that whatever
// they accept re-encodes to bytes they decode again to the same encoding
// (the input itself may use tolerated non-canonical DIS forms).

func FuzzIS(f *testing.F) {
	for _, s := range []string{"+4+1+1", "+4+1+2210+2130706433", "+4+1+32+64", "+4+1+42+11opsys=linux+6jobs= ", "+4+1+9"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, err := DecodeIS(b)
		if err != nil {
			return
		}
		enc := msg.Append(nil)
		again, err := DecodeIS(enc)
		if err != nil {
			t.Fatalf("re-encoding %q of %q does not decode: %v", enc, b, err)
		}
		if enc2 := again.Append(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("unstable encoding: %q then %q", enc, enc2)
		}
	})
}

func FuzzRM(f *testing.F) {
	for _, s := range []string{"+1+1+2+5ncpus+7loadave", "+1+1+1", "+1+1+3+7CONFIG:", "3+100+7ncpus=82+12loadave=0.01", "3+999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if req, err := DecodeRMRequest(b); err == nil {
			enc := req.Append(nil)
			again, err := DecodeRMRequest(enc)
			if err != nil {
				t.Fatalf("re-encoding %q of %q does not decode: %v", enc, b, err)
			}
			if enc2 := again.Append(nil); !bytes.Equal(enc, enc2) {
				t.Fatalf("unstable encoding: %q then %q", enc, enc2)
			}
		}
		if rep, err := DecodeRMReply(b); err == nil {
			enc := rep.Append(nil)
			again, err := DecodeRMReply(enc)
			if err != nil {
				t.Fatalf("re-encoding %q of %q does not decode: %v", enc, b, err)
			}
			if enc2 := again.Append(nil); !bytes.Equal(enc, enc2) {
				t.Fatalf("unstable encoding: %q then %q", enc, enc2)
			}
		}
	})
}

func FuzzIM(f *testing.F) {
	const hdr = "+3+1+539.vm2+32A81159280AD1480083AF0921F93C3CE1"
	for _, s := range []string{
		hdr + "+1+1+0+1+25+601895+58675+12+15+8Job_Name+0+5multi+0",
		hdr + "+3+3+1+0+3+4none+8hostname+02+14PBS_VNODENUM=1",
		hdr + "+0+2+0+0+0+0", hdr + "+6+5+1+0+3", hdr + "+8+7+0+1+2+4name", hdr + "+0+7+0+3abc",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, replyTo uint8) {
		answers := func(*IMHeader) int { return int(replyTo%13) - 1 }
		msg, err := DecodeIM(b, answers)
		if err != nil {
			return
		}
		enc := msg.Append(nil)
		again, err := DecodeIM(enc, answers)
		if err != nil {
			t.Fatalf("re-encoding %q of %q does not decode: %v", enc, b, err)
		}
		if enc2 := again.Append(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("unstable encoding: %q then %q", enc, enc2)
		}
	})
}

func FuzzTM(f *testing.F) {
	const hdr = "+2+1+539.vm2+32A81159280AD1480083AF0921F93C3CE1"
	for _, s := range []string{hdr + "3+100+1+1", hdr + "3+102+2+1+0+1+8hostname+0", hdr + "3+104+4+1+0+2",
		"+2+1+0+1+2+0+1+539.vm-1+0", "+2+1+0+2+2", "+2+13+999+95+17004",
		hdr + "3+101+6+1+1", hdr + "3+103+7+1+1+32+15", hdr + "3+112+9+1", "+2+1+0+6+2+3+4"} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, replyTo uint8) {
		if req, n, err := DecodeTMRequest(b); err == nil {
			if n > len(b) {
				t.Fatalf("consumed %d of %d bytes", n, len(b))
			}
			enc := req.Append(nil)
			again, n2, err := DecodeTMRequest(enc)
			if err != nil || n2 != len(enc) {
				t.Fatalf("re-encoding %q of %q: %v (%d bytes)", enc, b, err, n2)
			}
			if enc2 := again.Append(nil); !bytes.Equal(enc, enc2) {
				t.Fatalf("unstable encoding: %q then %q", enc, enc2)
			}
		}
		answers := func(int) int { return TM_INIT + int(replyTo%6) - 1 }
		if rep, n, err := DecodeTMReply(b, answers); err == nil {
			if n > len(b) {
				t.Fatalf("consumed %d of %d bytes", n, len(b))
			}
			enc := rep.Append(nil)
			again, n2, err := DecodeTMReply(enc, answers)
			if err != nil || n2 != len(enc) {
				t.Fatalf("re-encoding %q of %q: %v (%d bytes)", enc, b, err, n2)
			}
			if enc2 := again.Append(nil); !bytes.Equal(enc, enc2) {
				t.Fatalf("unstable encoding: %q then %q", enc, enc2)
			}
		}
	})
}
