package compattests

// This file holds the server replay's state_count corrections: the
// captured state_count of StatusServer replies replaced by the counts the
// spec requires, derived from the jobs the captures list
// (stateCountReason).

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopbs/batchreq"
	"gopbs/internal/capture"
)

// A correction replaces, in the captured replies, the value of one server
// attribute that GoPBS deliberately reports differently, with the value
// the spec requires, derived from the capture itself; the scenario's
// replies are then compared exactly.
type correction struct {
	attr, value, reason string
	// counts holds, for a state_count correction, the corrected count
	// by job_state letter.
	counts map[string]int
}

// apply returns want with the correction made, and records the departure
// when it changed anything.
func (c *correction) apply(t *testing.T, want *batchreq.Reply) *batchreq.Reply {
	out := *want
	out.Status = slices.Clone(want.Status)
	for i, o := range out.Status {
		if o.ObjType != batchreq.MGR_OBJ_SERVER {
			continue
		}
		attrs := slices.Clone(o.Attrs)
		for k, a := range attrs {
			if a.Name == c.attr && a.Value != c.value {
				results.depart(t, fmt.Sprintf("%s %q corrected to %q", c.attr, a.Value, c.value), c.reason)
				attrs[k] = batchreq.NewAttr(a.Name, c.value)
			}
		}
		out.Status[i].Attrs = attrs
	}
	return &out
}

// stateCountCorrection derives the state_count the capture's server
// should have reported from the jobs the same capture lists: each job in
// its job_state, an array summary (summarize_arrays) as one job per index
// of its job_array_request, in the array's listed state. The derived
// counts must add up to the captured total_jobs, so that the listing is
// known to cover every job.
func stateCountCorrection(t *testing.T, c *capture.Capture) *correction {
	counts := map[string]int{}
	total, listed := -1, -1
	for p := range capturedReplies(c) {
		jobs := 0
		perState := map[string]int{}
		for _, o := range p.Status {
			switch o.ObjType {
			case batchreq.MGR_OBJ_SERVER:
				for _, a := range o.Attrs {
					if a.Name == "total_jobs" {
						total, _ = strconv.Atoi(a.Value)
					}
				}
			case batchreq.MGR_OBJ_JOB:
				n := 1
				state := ""
				for _, a := range o.Attrs {
					switch a.Name {
					case "job_state":
						state = a.Value
					case "job_array_request":
						if strings.Contains(o.Name, "[]") {
							n = arrayIndexCount(t, a.Value)
						}
					}
				}
				perState[state] += n
				jobs += n
			}
		}
		if jobs > listed {
			listed, counts = jobs, perState
		}
	}
	if total < 0 || listed != total {
		t.Fatalf("state_count cannot be derived: the capture lists %d jobs, total_jobs is %d", listed, total)
	}
	return &correction{attr: "state_count", value: formatStateCount(counts), counts: counts, reason: stateCountReason}
}

// stepStateCount returns the state_count correction of a stateCount
// step whose capture c was read from path.
func stepStateCount(t *testing.T, path string, c *capture.Capture, st replayStep) *correction {
	if st.stateCountFrom == "" {
		return stateCountCorrection(t, c)
	}
	listing, err := capture.ReadFile(filepath.Join(filepath.Dir(path), st.stateCountFrom))
	if err != nil {
		t.Fatal(err)
	}
	return shiftedStateCount(t, c, listing)
}

// shiftedStateCount corrects the state_count of capture c, which lists no
// jobs, with the defect the earlier capture listing shows: what the
// listing's jobs add up to (stateCountCorrection) less the state_count
// the capture server reported beside them. The defect lasts as long as
// the array behind it: scenarios 67 and 68 (qstat -B) come after 41 and
// before 69 deletes array 5[], with no array created or changed between
// (server log). The corrected counts must not be negative and must add
// up to c's total_jobs.
func shiftedStateCount(t *testing.T, c, listing *capture.Capture) *correction {
	listed := stateCountCorrection(t, listing).counts
	reported, _ := capturedStateCount(t, listing)
	counts, total := capturedStateCount(t, c)
	sum := 0
	for _, k := range stateLetters {
		counts[k] += listed[k] - reported[k]
		if counts[k] < 0 {
			t.Fatalf("state_count cannot be corrected: %d jobs in state %s", counts[k], k)
		}
		sum += counts[k]
	}
	if sum != total {
		t.Fatalf("state_count cannot be corrected: %d jobs counted, total_jobs is %d", sum, total)
	}
	return &correction{attr: "state_count", value: formatStateCount(counts), counts: counts, reason: stateCountReason}
}

// stateLetters are the job_state letters of the state_count entries, in
// their order (spec 04 §4: Transit Queued Held Waiting Running Exiting).
var stateLetters = []string{"T", "Q", "H", "W", "R", "E"}

func formatStateCount(counts map[string]int) string {
	return fmt.Sprintf("Transit:%d Queued:%d Held:%d Waiting:%d Running:%d Exiting:%d ",
		counts["T"], counts["Q"], counts["H"], counts["W"], counts["R"], counts["E"])
}

// capturedStateCount returns the state_count (by job_state letter) and
// total_jobs of the first StatusServer reply of a capture that has them.
func capturedStateCount(t *testing.T, c *capture.Capture) (map[string]int, int) {
	for o := range replyObjects(c) {
		if o.ObjType != batchreq.MGR_OBJ_SERVER {
			continue
		}
		v, ok1 := o.Attrs.Get("state_count")
		tot, ok2 := o.Attrs.Get("total_jobs")
		if !ok1 || !ok2 {
			continue
		}
		total, err := strconv.Atoi(tot)
		if err != nil {
			t.Fatalf("total_jobs %q", tot)
		}
		counts := map[string]int{}
		for _, f := range strings.Fields(v) {
			name, n, ok := strings.Cut(f, ":")
			k, err := strconv.Atoi(n)
			if !ok || err != nil || name == "" {
				t.Fatalf("state_count %q", v)
			}
			counts[name[:1]] = k
		}
		return counts, total
	}
	t.Fatal("the capture has no server state_count")
	return nil, 0
}

// arrayIndexCount counts the indexes of a job_array_request such as
// "0-3", "1,4-6" or "0-9%2".
func arrayIndexCount(t *testing.T, req string) int {
	req, _, _ = strings.Cut(req, "%")
	n := 0
	for _, r := range strings.Split(req, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			t.Fatalf("job_array_request %q", req)
		}
		n += b - a + 1
	}
	return n
}
