package sched

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"gopbs/batchreq"
)

// schedCyclesPath is where the debug listener serves the recent
// scheduling cycles as JSON (a CyclesReport).
const schedCyclesPath = "/debug/gopbs/sched_cycles"

// DebugHandlers returns what the link adds to the hidden debug listener
// (package debugserve): at /debug/gopbs/sched_cycles, the durations of
// the default scheduler's recent cycles (tools/schedbench).
func (l *Link) DebugHandlers() map[string]http.Handler {
	sc := l.defaultSched()
	if sc == nil {
		return nil
	}
	return map[string]http.Handler{schedCyclesPath: &sc.cycles}
}

// CycleReport returns the default scheduler's recent cycles, oldest
// first.
func (l *Link) CycleReport() CyclesReport { return l.defaultSched().cycles.report() }

// maxSchedCycles is the number of recent cycles a schedCycleLog keeps.
const maxSchedCycles = 256

// CycleRecord is one scheduling cycle as the server saw it: from
// the moment it started to connect to the scheduler until the scheduler
// closed the connection. Its JSON form is part of what schedCyclesPath
// serves.
type CycleRecord struct {
	Seq     int64     `json:"seq"`     // 1 for the server's first cycle, and so on
	Command string    `json:"command"` // the command sent ("new", "time", ...)
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"` // the cycle's duration
	Started int       `json:"started"` // jobs run over the connection
}

// CyclesReport is the JSON document served at schedCyclesPath.
type CyclesReport struct {
	Total  int64         `json:"total"`  // cycles since the server started
	Cycles []CycleRecord `json:"cycles"` // the most recent ones, oldest first
}

// schedCycleLog keeps the durations of the most recent scheduling cycles
// for the debug listener. Its zero value is ready to use.
type schedCycleLog struct {
	mu     sync.Mutex
	total  int64
	recent []CycleRecord // ring of at most maxSchedCycles, recent[total%max] is the oldest when full
}

// add records a cycle of command cmd that started at start, lasted d and
// ran started jobs.
func (l *schedCycleLog) add(cmd int, start time.Time, d time.Duration, started int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	r := CycleRecord{Seq: l.total, Command: batchreq.SchedCommandName(cmd), Start: start, Seconds: d.Seconds(), Started: started}
	if len(l.recent) < maxSchedCycles {
		l.recent = append(l.recent, r)
		return
	}
	l.recent[(l.total-1)%maxSchedCycles] = r
}

// report returns the recorded cycles, oldest first.
func (l *schedCycleLog) report() CyclesReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	rep := CyclesReport{Total: l.total, Cycles: make([]CycleRecord, 0, len(l.recent))}
	if len(l.recent) < maxSchedCycles {
		rep.Cycles = append(rep.Cycles, l.recent...)
		return rep
	}
	oldest := int(l.total % maxSchedCycles)
	rep.Cycles = append(rep.Cycles, l.recent[oldest:]...)
	rep.Cycles = append(rep.Cycles, l.recent[:oldest]...)
	return rep
}

// ServeHTTP writes the report as JSON.
func (l *schedCycleLog) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(l.report())
}
