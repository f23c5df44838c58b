package resv

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRecordLine(t *testing.T) {
	r := &Reservation{ID: "R12", Owner: "alice", Users: []string{"bob", "carol"},
		Start: time.Unix(1795788000, 0), End: time.Unix(1795791600, 0), NodeCount: 2,
		Req: Requirements{MemBytes: 1 << 30, NCPU: 4, Arch: "x86_64", OS: "linux gnu",
			Attrs: []Attr{{"gpu", "1"}}, Props: []string{"fast"}},
		Assigned: []string{"n1", "n2"},
		Usage:    Usage{ActualStart: time.Unix(1795788010, 0), ActualEnd: time.Unix(1795791600, 0), Jobs: 3, JobSeconds: 5000}}
	at := time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		typ  byte
		want string
	}{
		{RecConfirmed, `11/27/2026 14:00:00;Y;R12;owner=alice users=bob,carol start=1795788000 end=1795791600 duration=3600 nodect=2 nodes=n1+n2 mem=1073741824 ncpu=4 arch=x86_64 opsys="linux gnu" l=gpu=1,fast`},
		{RecFinished, `11/27/2026 14:00:00;F;R12;owner=alice users=bob,carol start=1795788000 end=1795791600 duration=3600 nodect=2 nodes=n1+n2 mem=1073741824 ncpu=4 arch=x86_64 opsys="linux gnu" l=gpu=1,fast actual_start=1795788010 actual_end=1795791600 jobs=3 job_node_seconds=5000`},
	}
	for _, tc := range tests {
		rec := NewRecord(tc.typ, r, at)
		line := rec.Line()
		if line != tc.want {
			t.Errorf("Line:\n%s\nwant\n%s", line, tc.want)
		}
		back, err := ParseRecord(line, time.UTC)
		if err != nil {
			t.Fatalf("ParseRecord(%q): %v", line, err)
		}
		if tc.typ != RecFinished {
			rec.Usage = Usage{}
		}
		if !reflect.DeepEqual(back, rec) {
			t.Errorf("round trip:\n%+v\nwant\n%+v", back, rec)
		}
	}
	minimal := NewRecord(RecCancelled, &Reservation{ID: "R1", Owner: "bob", Start: time.Unix(100, 0), End: time.Unix(200, 0), NodeCount: 1}, at)
	if want := "11/27/2026 14:00:00;K;R1;owner=bob start=100 end=200 duration=100 nodect=1"; minimal.Line() != want {
		t.Errorf("minimal: %s", minimal.Line())
	}
}

func TestReadRecords(t *testing.T) {
	file := strings.Join([]string{
		"11/27/2026 10:00:00;Q;12.vm;queue=batch",
		"11/27/2026 10:00:01;Y;R1;owner=alice start=1795788000 end=1795791600 duration=3600 nodect=2",
		"11/27/2026 10:00:02;E;12.vm;user=alice exit_status=0",
		"11/27/2026 10:00:03;K;R1;owner=alice start=1795788000 nodect=2",
		"garbage",
		"11/27/2026 10:00:04;X;R1;owner=alice start=oops end=1 nodect=2",
		"11/27/2026 10:00:05;B;R2;owner=bob start=1795788000 end=1795791600 nodect=1 future_key=1",
		`11/27/2026 10:00:06;F;R3;owner="unterminated`,
		"11/27/2026 10:00:07;Y;Z3;owner=a start=1 end=2 nodect=1",
	}, "\n")
	recs, bad, err := ReadRecords(strings.NewReader(file), "20261127", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].ID != "R1" || recs[0].Type != RecConfirmed || recs[1].ID != "R2" || recs[1].Type != RecBegin {
		t.Errorf("records %+v", recs)
	}
	var lines []int
	for _, b := range bad {
		lines = append(lines, b.Line)
	}
	if !reflect.DeepEqual(lines, []int{4, 6, 8, 9}) {
		t.Errorf("bad lines %v: %v", lines, bad)
	}
	if !strings.HasPrefix(bad[0].Error(), "20261127:4: no end") {
		t.Errorf("error text %q", bad[0].Error())
	}
	if _, err := ParseRecord("11/27/2026 10:00:00;E;1.vm;x=1", time.UTC); !errors.Is(err, ErrNotReservation) {
		t.Errorf("job record: %v", err)
	}
}

// FuzzParseRecord: any line parses or is refused without panic; a
// parsed record written again parses to the same record.
func FuzzParseRecord(f *testing.F) {
	f.Add(`11/27/2026 14:00:00;F;R12;owner=alice users=bob,carol start=1795788000 end=1795791600 duration=3600 nodect=2 nodes=n1+n2 opsys="linux gnu" l=gpu=1,fast actual_start=1 actual_end=2 jobs=3 job_node_seconds=5000`)
	f.Add("11/27/2026 10:00:01;Y;R1;owner=alice start=1795788000 end=1795791600 duration=3600 nodect=2")
	f.Add("11/27/2026 10:00:00;Q;12.vm;queue=batch")
	f.Fuzz(func(t *testing.T, line string) {
		rec, err := ParseRecord(line, time.UTC)
		if err != nil {
			return
		}
		again, err := ParseRecord(rec.Line(), time.UTC)
		if err != nil {
			t.Fatalf("%q -> %q: %v", line, rec.Line(), err)
		}
		if again.Line() != rec.Line() {
			t.Fatalf("unstable: %q vs %q", again.Line(), rec.Line())
		}
	})
}
