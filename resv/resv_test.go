package resv

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	good := func() *Reservation {
		return &Reservation{Owner: "alice", Start: now.Add(time.Hour), End: now.Add(2 * time.Hour), NodeCount: 2}
	}
	tests := []struct {
		name  string
		edit  func(r *Reservation)
		wants []string // substrings of the problems, in order; none: valid
	}{
		{"valid", func(*Reservation) {}, nil},
		{"start now within grace", func(r *Reservation) { r.Start = now.Add(-30 * time.Second) }, nil},
		{"node list", func(r *Reservation) { r.NodeCount, r.Nodes = 0, []string{"n1", "n2"} }, nil},
		{"start in the past", func(r *Reservation) { r.Start = now.Add(-2 * time.Hour) },
			[]string{"start 2026-11-27T10:00:00Z is in the past (now 2026-11-27T12:00:00Z)"}},
		{"end before start", func(r *Reservation) { r.End = now.Add(30 * time.Minute) },
			[]string{"end 2026-11-27T12:30:00Z is not after start 2026-11-27T13:00:00Z"}},
		{"end equal start", func(r *Reservation) { r.End = r.Start }, []string{"is not after start"}},
		{"no end", func(r *Reservation) { r.End = time.Time{} }, []string{"no end time or duration"}},
		{"no start", func(r *Reservation) { r.Start = time.Time{} }, []string{"no start time"}},
		{"no nodes", func(r *Reservation) { r.NodeCount = 0 }, []string{"number of nodes must be at least 1"}},
		{"node twice", func(r *Reservation) { r.Nodes = []string{"n1", "n1"} }, []string{"node n1 listed twice"}},
		{"bad node", func(r *Reservation) { r.Nodes = []string{"n 1"} }, []string{`bad node name "n 1"`}},
		{"bad user", func(r *Reservation) { r.Users = []string{"bob", "x;y"} }, []string{`bad user name "x;y"`}},
		{"no owner", func(r *Reservation) { r.Owner = "" }, []string{"no owner"}},
		{"negative mem", func(r *Reservation) { r.Req.MemBytes = -1 }, []string{"memory must not be negative"}},
		{"several", func(r *Reservation) { r.Start = now.Add(-3 * time.Hour); r.NodeCount = -1 },
			[]string{"is in the past", "number of nodes"}},
	}
	for _, tc := range tests {
		r := good()
		tc.edit(r)
		err := r.Validate(now)
		if tc.wants == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want a ValidationError", tc.name, err)
			continue
		}
		if len(ve.Problems) != len(tc.wants) {
			t.Errorf("%s: problems %q, want %d", tc.name, ve.Problems, len(tc.wants))
			continue
		}
		for i, w := range tc.wants {
			if !strings.Contains(ve.Problems[i], w) {
				t.Errorf("%s: problem %q, want it to contain %q", tc.name, ve.Problems[i], w)
			}
		}
	}
}

func TestValidateChange(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	r := &Reservation{Owner: "alice", Start: now.Add(time.Hour), End: now.Add(2 * time.Hour), NodeCount: 2,
		Status: Status{State: Confirmed}}
	running := *r
	running.Start, running.State = now.Add(-time.Hour), Running
	tests := []struct {
		name string
		r    *Reservation
		c    Change
		want string
	}{
		{"later end", r, Change{End: now.Add(3 * time.Hour)}, ""},
		{"earlier start", r, Change{Start: now.Add(30 * time.Minute)}, ""},
		{"start after end", r, Change{Start: now.Add(3 * time.Hour)}, "is not after start"},
		{"start in past", r, Change{Start: now.Add(-time.Hour)}, "is in the past"},
		{"running: end", &running, Change{End: now.Add(5 * time.Hour)}, ""},
		{"running: start", &running, Change{Start: now.Add(time.Minute)}, "the start of a running reservation cannot change"},
		{"running: end now", &running, Change{End: now}, "the end of a running reservation must be in the future"},
		{"bad user", r, Change{Users: []string{"a b"}, SetUsers: true}, "bad user name"},
	}
	for _, tc := range tests {
		err := tc.r.ValidateChange(&tc.c, now)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	c := &Change{End: now.Add(4 * time.Hour), NodeCount: 3, Users: []string{"bob"}, SetUsers: true}
	x := *r
	x.Nodes = []string{"a", "b"}
	x.Apply(c)
	if !x.End.Equal(c.End) || x.NodeCount != 3 || x.Nodes != nil || !reflect.DeepEqual(x.Users, []string{"bob"}) || !x.Start.Equal(r.Start) {
		t.Errorf("Apply: %+v", x)
	}
}

func TestIDsAndHelpers(t *testing.T) {
	for in, want := range map[string]int{"R123": 123, "r7": 7, "42": 42, "R0": 0} {
		if got, err := ParseID(in); err != nil || got != want {
			t.Errorf("ParseID(%q) = %d, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "R", "R-1", "R+1", "Rx", "R1234567890", "S12"} {
		if _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
	if FormatID(12) != "R12" {
		t.Error(FormatID(12))
	}
	r := &Reservation{Owner: "alice", Users: []string{"bob"}, NodeCount: 3,
		Start: time.Unix(0, 0), End: time.Unix(3600, 0)}
	if !r.MayUse("alice") || !r.MayUse("bob") || r.MayUse("carol") {
		t.Error("MayUse")
	}
	if !r.MayChange("alice", false) || r.MayChange("bob", false) || !r.MayChange("bob", true) {
		t.Error("MayChange")
	}
	if r.NodeSeconds() != 3*3600 {
		t.Error("NodeSeconds", r.NodeSeconds())
	}
	if !r.Overlaps(time.Unix(3599, 0), time.Unix(5000, 0)) || r.Overlaps(time.Unix(3600, 0), time.Unix(5000, 0)) {
		t.Error("Overlaps")
	}
	for in, want := range map[string]int64{"512": 512 << 20, "2gb": 2 << 30, "1024KB": 1 << 20, "10b": 10, "1t": 1 << 40} {
		if got, err := ParseMem(in); err != nil || got != want {
			t.Errorf("ParseMem(%q) = %d, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "gb", "1xb", "-1", "99999999999999999gb"} {
		if _, err := ParseMem(bad); err == nil {
			t.Errorf("ParseMem(%q) accepted", bad)
		}
	}
}
