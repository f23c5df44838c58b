package sched

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"gopbs/batchreq"
)

func TestSchedCycleLog(t *testing.T) {
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		add        int
		wantLen    int
		firstSeq   int64
		lastSeq    int64
		wantTotal  int64
		lastMillis int
	}{
		{"empty", 0, 0, 0, 0, 0, 0},
		{"one", 1, 1, 1, 1, 1, 1},
		{"full", maxSchedCycles, maxSchedCycles, 1, maxSchedCycles, maxSchedCycles, maxSchedCycles},
		{"wrapped once", maxSchedCycles + 1, maxSchedCycles, 2, maxSchedCycles + 1, maxSchedCycles + 1, maxSchedCycles + 1},
		{"wrapped twice", 2*maxSchedCycles + 7, maxSchedCycles, maxSchedCycles + 8, 2*maxSchedCycles + 7, 2*maxSchedCycles + 7, 2*maxSchedCycles + 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l schedCycleLog
			for i := 1; i <= tc.add; i++ {
				l.add(batchreq.SCH_SCHEDULE_TIME, base.Add(time.Duration(i)*time.Second), time.Duration(i)*time.Millisecond, i%3)
			}
			rep := l.report()
			if rep.Total != tc.wantTotal || len(rep.Cycles) != tc.wantLen {
				t.Fatalf("total %d, %d cycles; want %d, %d", rep.Total, len(rep.Cycles), tc.wantTotal, tc.wantLen)
			}
			if tc.wantLen == 0 {
				return
			}
			if rep.Cycles[0].Seq != tc.firstSeq || rep.Cycles[len(rep.Cycles)-1].Seq != tc.lastSeq {
				t.Errorf("seq %d..%d, want %d..%d", rep.Cycles[0].Seq, rep.Cycles[len(rep.Cycles)-1].Seq, tc.firstSeq, tc.lastSeq)
			}
			for i := 1; i < len(rep.Cycles); i++ {
				if rep.Cycles[i].Seq != rep.Cycles[i-1].Seq+1 || !rep.Cycles[i].Start.After(rep.Cycles[i-1].Start) {
					t.Fatalf("cycle %d out of order: %+v after %+v", i, rep.Cycles[i], rep.Cycles[i-1])
				}
			}
			last := rep.Cycles[len(rep.Cycles)-1]
			if want := float64(tc.lastMillis) / 1000; last.Seconds != want || last.Command != "time" || last.Started != tc.lastMillis%3 {
				t.Errorf("last cycle %+v, want %v s, command time, %d started", last, want, tc.lastMillis%3)
			}
		})
	}
}

func TestSchedCyclesServed(t *testing.T) {
	var l schedCycleLog
	l.add(batchreq.SCH_SCHEDULE_NEW, time.Unix(1795000000, 0), 1500*time.Millisecond, 4)
	w := httptest.NewRecorder()
	l.ServeHTTP(w, httptest.NewRequest("GET", schedCyclesPath, nil))
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var rep CyclesReport
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	if rep.Total != 1 || len(rep.Cycles) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if c := rep.Cycles[0]; c.Command != "new" || c.Seconds != 1.5 || c.Started != 4 || c.Seq != 1 || !c.Start.Equal(time.Unix(1795000000, 0)) {
		t.Errorf("cycle %+v", c)
	}
}
