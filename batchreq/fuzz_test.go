package batchreq

import (
	"bytes"
	"testing"

	"gopbs/dis"
)

// FuzzReadRequest feeds arbitrary bytes to both request readers. A
// request that decodes must encode to bytes that decode again to a
// request with the same encoding (canonical encoding is a fixed point).
func FuzzReadRequest(f *testing.F) {
	for _, v := range requestVectors {
		f.Add([]byte(v.wire))
	}
	f.Add([]byte("+2+1+9+4root+2+1+5batch+1" + "2+11" + "2+11max_running" + "+0" + "2+10" + "0123456789" + "+0" + "+0"))
	f.Add([]byte("+2+12+62+4root+2vm+10210+4294967295+1+0+0+0"))
	f.Add([]byte("+2+12+22+4root+49.vm+1+2vm2+82+0"))
	f.Add([]byte("+2+12+52+4root+5alice+41.vm+42.vm+5+1-3+0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, read := range []func(*dis.Reader) (*Request, error){ReadRequest, ReadServerRequest} {
			r := dis.NewReader(bytes.NewReader(data))
			r.MaxString = 1 << 20
			q, err := read(r)
			if err != nil {
				continue
			}
			if r.Offset() > int64(len(data)) {
				t.Fatalf("consumed %d of %d bytes", r.Offset(), len(data))
			}
			enc := q.Append(nil)
			q2, err := read(dis.NewReader(bytes.NewReader(enc)))
			if err != nil {
				t.Fatalf("re-decoding %q: %v", enc, err)
			}
			if enc2 := q2.Append(nil); !bytes.Equal(enc, enc2) {
				t.Fatalf("encoding not stable:\n%q\n%q", enc, enc2)
			}
		}
	})
}

// FuzzReadReply does the same for replies.
func FuzzReadReply(f *testing.F) {
	for _, w := range []string{
		"+2+1+0+0+1",
		"+2+1+0+0+22+171.srv.example.com",
		"+2+1+0+0+6+1+22+171.srv.example.com+22+15+8Job_Name+0+5STDIN+02+12+9job_state+0+1Q+0",
		"+2+1+0+0+9+1210+4294967295+0+0+0",
		"+2+1+0+2+5+2+41.vm+42.vm",
		"+2+1+0+0+8+2vm",
		"+2+15+15058+0+72+56Bad DIS based Request Protocol MSG=cannot decode message",
		"+2+1+0+0+32+171.srv.example.com",
	} {
		f.Add([]byte(w))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := dis.NewReader(bytes.NewReader(data))
		r.MaxString = 1 << 20
		p, err := ReadReply(r)
		if err != nil {
			return
		}
		enc := p.Append(nil)
		p2, err := ReadReply(dis.NewReader(bytes.NewReader(enc)))
		if err != nil {
			t.Fatalf("re-decoding %q: %v", enc, err)
		}
		if enc2 := p2.Append(nil); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable:\n%q\n%q", enc, enc2)
		}
	})
}
