//go:build linux

package transport

import (
	"io"
	"os"
	"testing"

	"gopbs/batchreq"
	"gopbs/dis"
)

// FuzzLoopDecode checks the event loop's incremental decoding: bytes
// arriving in two pieces give, once the first piece decodes to a request
// or an error, the same outcome and length as the whole; a piece that is
// incomplete is a prefix of something the whole may complete; and the
// ends a stream can have (EOF, a timeout) never leave a request
// "incomplete" or panic.
func FuzzLoopDecode(f *testing.F) {
	seeds := [][]byte{
		batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, "root", &batchreq.QueueJob{Attrs: batchreq.AttrList{batchreq.NewAttr("Job_Name", "x")}}).Append(nil),
		batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, "root", &batchreq.JobFile{JobID: "1.vm", Data: []byte("#!/bin/sh\n")}).Append(nil),
		batchreq.NewRequest(batchreq.PBS_BATCH_Commit, "root", &batchreq.JobID{ID: "1.vm"}).Append(nil),
		batchreq.NewRequest(batchreq.PBS_BATCH_AuthenUser, "root", &batchreq.AuthenUser{Port: 1023}).Append(nil),
		batchreq.NewRequest(batchreq.PBS_BATCH_Disconnect, "root", nil).Append(nil),
		[]byte("+2+1" + "2+19+5alice+3ab"),
		[]byte("+2+1" + "2+21" + "9+999999999alice"),
		[]byte("hello world\n"),
	}
	for _, s := range seeds {
		f.Add(s, uint(len(s)/2))
	}
	l := &netLoop{r: dis.NewReader(nil)}
	f.Fuzz(func(t *testing.T, data []byte, cut uint) {
		if len(data) == 0 {
			return
		}
		k := int(cut % uint(len(data)+1))
		whole, wn, werr := l.decode(data, errNeedMore)
		part, pn, perr := l.decode(data[:k], errNeedMore)
		if pn >= 0 {
			if pn > k {
				t.Fatalf("used %d bytes of %d", pn, k)
			}
			if wn != pn || (werr == nil) != (perr == nil) {
				t.Fatalf("prefix %d: n=%d err=%v; whole: n=%d err=%v", k, pn, perr, wn, werr)
			}
			if perr == nil && part.Type != whole.Type {
				t.Fatalf("prefix %d: type %d, whole: %d", k, part.Type, whole.Type)
			}
		}
		if wn > len(data) {
			t.Fatalf("used %d bytes of %d", wn, len(data))
		}
		for _, end := range []error{io.EOF, os.ErrDeadlineExceeded} {
			if _, n, err := l.decode(data, end); n < 0 {
				t.Fatalf("end %v: incomplete (err %v)", end, err)
			}
		}
	})
}
