package compattests

// This file holds the server replay's reading of captures and comparison
// of replies: the requests, replies, scripts and attributes a capture
// holds, the epoch shift of replayed requests, and the normalisation of
// the values that must differ between runs.

import (
	"bytes"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
)

// capturedScript returns the job script the server sent to the MOM in a
// capture.
func capturedScript(t *testing.T, file string) []byte {
	c, err := capture.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, conn := range c.Conns {
		for _, turn := range conn.Turns() {
			if !turn.FromClient {
				continue
			}
			for _, req := range splitRequests(turn.Data) {
				if b, ok := req.Body.(*batchreq.JobFile); ok && req.Type == batchreq.PBS_BATCH_jobscript {
					return b.Data
				}
			}
		}
	}
	t.Fatalf("%s: no JobScript", file)
	return nil
}

// capturedAttrs returns the attributes named (all when names is empty)
// of object id in the first reply of a capture that reports it.
func capturedAttrs(t *testing.T, file, id string, names ...string) batchreq.AttrList {
	c, err := capture.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for o := range replyObjects(c) {
		if o.Name != id {
			continue
		}
		var out batchreq.AttrList
		for _, a := range o.Attrs {
			if len(names) == 0 || slices.Contains(names, a.Name) {
				out = append(out, a)
			}
		}
		return out
	}
	return nil
}

// capturedReplies yields the replies in capture c (those of the server
// and of any other daemon answering), connection by connection, in
// order.
func capturedReplies(c *capture.Capture) iter.Seq[*batchreq.Reply] {
	return func(yield func(*batchreq.Reply) bool) {
		for _, conn := range c.Conns {
			for _, turn := range conn.Turns() {
				if turn.FromClient {
					continue
				}
				for _, p := range splitReplies(turn.Data) {
					if !yield(p) {
						return
					}
				}
			}
		}
	}
}

// replyObjects yields the status objects of the replies in capture c, in
// order.
func replyObjects(c *capture.Capture) iter.Seq[*batchreq.StatusObject] {
	return func(yield func(*batchreq.StatusObject) bool) {
		for p := range capturedReplies(c) {
			for i := range p.Status {
				if !yield(&p.Status[i]) {
					return
				}
			}
		}
	}
}

var epochRE = regexp.MustCompile(`1[78]\d{8}`)

// shiftEpochs moves epoch times in a request by shift seconds (the
// capture's "two hours from now" must stay in the future).
func shiftEpochs(b []byte, shift int64) []byte {
	return epochRE.ReplaceAllFunc(b, func(m []byte) []byte {
		n, _ := strconv.ParseInt(string(m), 10, 64)
		return []byte(strconv.FormatInt(n+shift, 10))
	})
}

// splitRequests returns the requests of a captured stream, up to the
// first that does not decode.
func splitRequests(b []byte) []*batchreq.Request { return readAll(b, batchreq.ReadRequest) }

// splitReplies returns the replies of a captured stream, up to the first
// that does not decode.
func splitReplies(b []byte) []*batchreq.Reply { return readAll(b, batchreq.ReadReply) }

// readAll reads the messages of b with read until it fails.
func readAll[M any](b []byte, read func(*dis.Reader) (M, error)) []M {
	rd := dis.NewReader(bytes.NewReader(b))
	var out []M
	for {
		m, err := read(rd)
		if err != nil {
			return out
		}
		out = append(out, m)
	}
}

// normalizeValue replaces values that must differ between runs: rates,
// times, a running job's remaining walltime (seconds left, which depend
// on when the replay runs) and queue_rank, a counter of enqueues whose
// value depends on the capture server's history (the snapshot shows job 2
// with rank 3; job 9 had 12) and that only daemons see.
func normalizeValue(a batchreq.Attr) string {
	name, v := a.Name, a.Value
	if name == "net_counter" {
		return "<RATE>"
	}
	if name == "queue_rank" {
		if _, err := strconv.ParseUint(v, 10, 64); err == nil {
			return "<RANK>"
		}
	}
	if a.FullName() == "Walltime.Remaining" {
		if _, err := strconv.ParseUint(v, 10, 64); err == nil {
			return "<SECONDS>"
		}
	}
	return epochRE.ReplaceAllString(v, "<EPOCH>")
}

// dropHistory removes resources_assigned entries with value 0: the
// capture server had run a job before the capture, which leaves them
// behind; a fresh server has never assigned resources.
func dropHistory(l batchreq.AttrList) batchreq.AttrList {
	var out batchreq.AttrList
	for _, a := range l {
		if a.Name == "resources_assigned" && a.Value == "0" {
			continue
		}
		out = append(out, a)
	}
	return out
}

func compareReplies(want, got *batchreq.Reply) string {
	if want.Code != got.Code || want.AuxCode != got.AuxCode || want.Choice != got.Choice {
		return fmt.Sprintf("code/aux/choice %d/%d/%d, want %d/%d/%d (text %q, want %q)",
			got.Code, got.AuxCode, got.Choice, want.Code, want.AuxCode, want.Choice, got.Text, want.Text)
	}
	if want.Text != got.Text || want.JobID != got.JobID || want.Location != got.Location {
		return fmt.Sprintf("text %q id %q loc %q, want %q %q %q", got.Text, got.JobID, got.Location, want.Text, want.JobID, want.Location)
	}
	if strings.Join(want.JobIDs, ",") != strings.Join(got.JobIDs, ",") {
		return fmt.Sprintf("job ids %v, want %v", got.JobIDs, want.JobIDs)
	}
	if len(want.Status) != len(got.Status) {
		var gn, wn []string
		for _, o := range got.Status {
			gn = append(gn, o.Name)
		}
		for _, o := range want.Status {
			wn = append(wn, o.Name)
		}
		return fmt.Sprintf("%d status objects %v, want %d %v", len(got.Status), gn, len(want.Status), wn)
	}
	for i := range want.Status {
		w, g := want.Status[i], got.Status[i]
		if w.Name != g.Name || w.ObjType != g.ObjType {
			return fmt.Sprintf("object %d is %d %q, want %d %q", i, g.ObjType, g.Name, w.ObjType, w.Name)
		}
		wl, gl := dropHistory(w.Attrs), dropHistory(g.Attrs)
		for k := 0; k < max(len(wl), len(gl)); k++ {
			var wa, ga string
			if k < len(wl) {
				wa = wl[k].FullName() + "=" + normalizeValue(wl[k])
			}
			if k < len(gl) {
				ga = gl[k].FullName() + "=" + normalizeValue(gl[k])
			}
			if wa != ga {
				return fmt.Sprintf("object %q attribute %d: %q, want %q", w.Name, k, ga, wa)
			}
		}
	}
	return ""
}
