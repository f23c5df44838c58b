package attr

import (
	"runtime"
	"strconv"
	"testing"
)

// typicalJob builds a job like the running job of capture 58, with
// per-job names, paths and environment so that little is shared.
func typicalJob(tb testing.TB, n int) *Set {
	id := strconv.Itoa(n)
	s := NewSet(JobTable())
	for _, e := range capture58 {
		v := e[2]
		switch e[0] {
		case "Walltime":
			continue
		case "Job_Name":
			v = "job" + id
		case "hashname":
			v = id + ".vm"
		case "Error_Path":
			v = "vm:/home/alice/job" + id + ".e" + id
		case "Output_Path":
			v = "vm:/home/alice/job" + id + ".o" + id
		case "Variable_List":
			v += ",JOBSEQ=" + id
		case "session_id", "ctime", "qtime", "mtime", "etime", "start_time":
			v = strconv.Itoa(1795310495 + n)
		}
		if err := s.Decode(e[0], e[1], e[1] != "", v); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// TestJobFootprint checks that a typical job set stays well below the 3 KB
// per job the server's memory budget allows.
func TestJobFootprint(t *testing.T) {
	const n = 5000
	jobs := make([]*Set, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range jobs {
		jobs[i] = typicalJob(t, i)
		jobs[i].Compact()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes per job (%d values, %d resources)", per, len(jobs[0].vals), len(jobs[0].res))
	if per > 2048 {
		t.Errorf("a typical job takes %d bytes, want at most 2048", per)
	}
	runtime.KeepAlive(jobs)
}

func BenchmarkStatus(b *testing.B) {
	s := typicalJob(b, 1)
	dst := make([]Entry, 0, 64)
	o := &EncodeOptions{Access: AccessUser, PrivRead: true}
	b.ReportAllocs()
	for b.Loop() {
		dst = s.AppendEntries(dst[:0], o)
	}
}

func BenchmarkDecodeJob(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		typicalJob(b, i)
	}
}
