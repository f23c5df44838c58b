package resv

import (
	"reflect"
	"testing"
	"time"
)

func TestHeldAndShortage(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 11, 27, h, m, 0, 0, time.UTC) }
	list := []*Reservation{
		{ID: "R9", Start: at(12, 30), End: at(13, 30), Assigned: []string{"n3"}, Status: Status{State: Running}},
		{ID: "R8", Start: at(12, 0), End: at(13, 15), Assigned: []string{"n3", "n4"}, Status: Status{State: Confirmed}},
		{ID: "R7", Start: at(13, 0), End: at(14, 0), Assigned: []string{"n5"}, Status: Status{State: Cancelled}},
		{ID: "R6", Start: at(14, 0), End: at(15, 0), Assigned: []string{"n1"}, Status: Status{State: Confirmed}},
		{ID: "R5", Start: at(13, 30), End: at(15, 0), Assigned: []string{"n2"}, Status: Status{State: WaitCommit, Pending: OpCreate}},
	}
	held := Held(list, at(13, 0), at(14, 0), "")
	got := map[string]string{}
	for n, r := range held {
		got[n] = r.ID
	}
	if want := map[string]string{"n3": "R8", "n4": "R8", "n2": "R5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("held %v, want %v", got, want)
	}
	if h := Held(list, at(13, 0), at(14, 0), "R8"); h["n3"].ID != "R9" || h["n4"] != nil {
		t.Errorf("except R8: %v", h)
	}
	msg := Shortage(3, []string{"n1", "n2", "n3"}, held, at(13, 0), at(14, 0), time.UTC)
	want := "only 1 of 3 nodes free from 2026-11-27T13:00:00Z to 2026-11-27T14:00:00Z: " +
		"n2 held by R5 (2026-11-27T13:30:00Z to 2026-11-27T15:00:00Z), n3 held by R8 (2026-11-27T12:00:00Z to 2026-11-27T13:15:00Z)"
	if msg != want {
		t.Errorf("Shortage:\n%s\nwant\n%s", msg, want)
	}
}

func TestPendingExpired(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	r := &Reservation{Start: at.Add(time.Hour), Status: Status{State: WaitCommit, Pending: OpCreate}, PendingSince: at}
	for _, tc := range []struct {
		r    Reservation
		now  time.Time
		want bool
	}{
		{*r, at.Add(4 * time.Minute), false},
		{*r, at.Add(5 * time.Minute), true},
		{*r, at.Add(time.Hour), true},
		{Reservation{Start: at.Add(time.Minute), Status: Status{State: Confirmed, Pending: OpCancel}, PendingSince: at}, at.Add(time.Minute), true},
		{Reservation{Start: at.Add(time.Hour), Status: Status{State: Confirmed}, PendingSince: at}, at.Add(time.Hour * 2), false},
	} {
		if got := tc.r.PendingExpired(tc.now, DefaultCommitTimeout); got != tc.want {
			t.Errorf("%+v at %v: %v", tc.r.Status, tc.now, got)
		}
	}
}
