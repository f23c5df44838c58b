package server

import "fmt"

// JobRecord is a job as stored in the server database (bucket store.Jobs),
// decoded without the attribute definition tables: attributes are kept
// by name, in stored order, including names this server does not define.
// It lets tools such as printjob show a stopped server's jobs.
type JobRecord struct {
	ID              string
	Seq             int64 // place in the server's job list (submission order; recovery sorts by it)
	State, Substate int64 // job state (0 transit … 6 complete) and substate
	Hold            int64 // hold bits
	Queue           string
	Rank            int64  // queue rank
	ArrayIndex      int64  // index within Parent
	Parent          string // array id of a sub-job, else empty
	ArrayRequest    string // array request (-t) of an array template, else empty
	PurgeAt         int64  // when a completed job is purged (Unix time), 0 if not
	Attrs           []RecordAttr
	ArrayCounts     []int64 // array templates: size, ok, not ok, started
}

// RecordAttr is one stored attribute value.
type RecordAttr struct {
	Name, Resource, Value string
}

// DecodeJobRecord decodes the stored record b of job id. It checks the
// encoding only, not the values.
func DecodeJobRecord(id string, b []byte) (*JobRecord, error) {
	if len(b) == 0 || b[0] != recordVersion {
		return nil, fmt.Errorf("%w: unknown record version", errCorrupt)
	}
	d := &decoder{b: b[1:]}
	j := &JobRecord{ID: id}
	j.Seq = d.int()
	j.State = d.int()
	j.Substate = d.int()
	j.Hold = d.int()
	j.Queue = d.str()
	j.Rank = d.int()
	j.ArrayIndex = d.int()
	j.Parent = d.str()
	j.ArrayRequest = d.str()
	j.PurgeAt = d.int()
	n := d.int()
	if n < 0 || n > int64(len(b)) {
		return nil, errCorrupt
	}
	for i := int64(0); i < n && d.err == nil; i++ {
		j.Attrs = append(j.Attrs, RecordAttr{Name: d.str(), Resource: d.str(), Value: d.str()})
	}
	for j.ArrayRequest != "" && len(d.b) > 0 && d.err == nil {
		j.ArrayCounts = append(j.ArrayCounts, d.int())
	}
	if d.err != nil {
		return nil, d.err
	}
	return j, nil
}
