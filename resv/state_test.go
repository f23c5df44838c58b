package resv

import (
	"errors"
	"testing"
)

func TestNext(t *testing.T) {
	st := func(s State, p Op) Status { return Status{State: s, Pending: p} }
	tests := []struct {
		from Status
		ev   Event
		want Status
		err  error
	}{
		// creation with -T
		{st(WaitCommit, OpCreate), EvCommit, st(Confirmed, OpNone), nil},
		{st(WaitCommit, OpCreate), EvAbort, st(Aborted, OpNone), nil},
		{st(WaitCommit, OpCreate), EvTimeout, st(Aborted, OpNone), nil},
		{st(WaitCommit, OpCreate), EvStart, st(Aborted, OpNone), nil},
		{st(WaitCommit, OpCreate), EvEnd, st(Aborted, OpNone), nil},
		{st(WaitCommit, OpCreate), EvModify, st(WaitCommit, OpCreate), ErrPending},
		{st(WaitCommit, OpCreate), EvCancel, st(WaitCommit, OpCreate), ErrPending},
		{st(WaitCommit, OpCreate), EvDestroyT, st(WaitCommit, OpCreate), ErrPending},
		// confirmed, nothing pending
		{st(Confirmed, OpNone), EvStart, st(Running, OpNone), nil},
		{st(Confirmed, OpNone), EvEnd, st(Done, OpNone), nil},
		{st(Confirmed, OpNone), EvModify, st(Confirmed, OpNone), nil},
		{st(Confirmed, OpNone), EvModifyT, st(Confirmed, OpModify), nil},
		{st(Confirmed, OpNone), EvCancel, st(Cancelled, OpNone), nil},
		{st(Confirmed, OpNone), EvCancelT, st(Confirmed, OpCancel), nil},
		{st(Confirmed, OpNone), EvDestroy, st(Destroyed, OpNone), nil},
		{st(Confirmed, OpNone), EvDestroyT, st(Confirmed, OpDestroy), nil},
		{st(Confirmed, OpNone), EvCommit, st(Confirmed, OpNone), ErrNothingPending},
		{st(Confirmed, OpNone), EvAbort, st(Confirmed, OpNone), ErrNothingPending},
		{st(Confirmed, OpNone), EvTimeout, st(Confirmed, OpNone), ErrNothingPending},
		// pending operations on a confirmed reservation
		{st(Confirmed, OpModify), EvCommit, st(Confirmed, OpNone), nil},
		{st(Confirmed, OpModify), EvAbort, st(Confirmed, OpNone), nil},
		{st(Confirmed, OpModify), EvTimeout, st(Confirmed, OpNone), nil},
		{st(Confirmed, OpModify), EvStart, st(Running, OpNone), nil},
		{st(Confirmed, OpModify), EvModify, st(Confirmed, OpModify), ErrPending},
		{st(Confirmed, OpCancel), EvCommit, st(Cancelled, OpNone), nil},
		{st(Confirmed, OpCancel), EvAbort, st(Confirmed, OpNone), nil},
		{st(Confirmed, OpCancel), EvDestroy, st(Confirmed, OpCancel), ErrPending},
		{st(Confirmed, OpDestroy), EvCommit, st(Destroyed, OpNone), nil},
		{st(Confirmed, OpDestroy), EvAbort, st(Confirmed, OpNone), nil},
		{st(Confirmed, OpDestroy), EvEnd, st(Done, OpNone), nil},
		// running
		{st(Running, OpNone), EvEnd, st(Done, OpNone), nil},
		{st(Running, OpNone), EvStart, st(Running, OpNone), ErrWrongState},
		{st(Running, OpNone), EvModify, st(Running, OpNone), nil},
		{st(Running, OpNone), EvCancel, st(Cancelled, OpNone), nil},
		{st(Running, OpNone), EvCancelT, st(Running, OpCancel), nil},
		{st(Running, OpCancel), EvEnd, st(Done, OpNone), nil},
		{st(Running, OpCancel), EvCommit, st(Cancelled, OpNone), nil},
		{st(Running, OpNone), EvDestroy, st(Destroyed, OpNone), nil},
		// unconfirmed (seed 003, interface 8)
		{st(Unconfirmed, OpNone), EvConfirm, st(Confirmed, OpNone), nil},
		{st(Unconfirmed, OpNone), EvStart, st(Unconfirmed, OpNone), nil},
		{st(Unconfirmed, OpNone), EvEnd, st(Cancelled, OpNone), nil},
		{st(Unconfirmed, OpNone), EvModify, st(Unconfirmed, OpNone), ErrWrongState},
		{st(Unconfirmed, OpNone), EvModifyT, st(Unconfirmed, OpNone), ErrWrongState},
		{st(Unconfirmed, OpNone), EvCancel, st(Cancelled, OpNone), nil},
		{st(Unconfirmed, OpNone), EvCancelT, st(Unconfirmed, OpCancel), nil},
		{st(Unconfirmed, OpNone), EvDestroy, st(Destroyed, OpNone), nil},
		{st(Unconfirmed, OpNone), EvCommit, st(Unconfirmed, OpNone), ErrNothingPending},
		{st(Unconfirmed, OpCancel), EvConfirm, st(Unconfirmed, OpCancel), ErrPending},
		{st(Unconfirmed, OpCancel), EvCommit, st(Cancelled, OpNone), nil},
		{st(Confirmed, OpNone), EvConfirm, st(Confirmed, OpNone), ErrWrongState},
		// done and cancelled
		{st(Done, OpNone), EvDestroy, st(Destroyed, OpNone), nil},
		{st(Done, OpNone), EvDestroyT, st(Done, OpDestroy), nil},
		{st(Done, OpDestroy), EvAbort, st(Done, OpNone), nil},
		{st(Done, OpNone), EvCancel, st(Done, OpNone), ErrWrongState},
		{st(Done, OpNone), EvModify, st(Done, OpNone), ErrWrongState},
		{st(Done, OpNone), EvEnd, st(Done, OpNone), nil},
		{st(Cancelled, OpNone), EvDestroy, st(Destroyed, OpNone), nil},
		{st(Cancelled, OpNone), EvCancel, st(Cancelled, OpNone), ErrWrongState},
		{st(Cancelled, OpNone), EvModifyT, st(Cancelled, OpNone), ErrWrongState},
		{st(Cancelled, OpNone), EvStart, st(Cancelled, OpNone), nil},
		// final states
		{st(Destroyed, OpNone), EvDestroy, st(Destroyed, OpNone), ErrGone},
		{st(Aborted, OpNone), EvCommit, st(Aborted, OpNone), ErrGone},
		{st(Aborted, OpNone), EvStart, st(Aborted, OpNone), ErrGone},
	}
	for _, tc := range tests {
		got, err := Next(tc.from, tc.ev)
		if got != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("Next(%v, %v) = %v, %v; want %v, %v", tc.from, tc.ev, got, err, tc.want, tc.err)
		}
	}
}

// TestNextTotal checks every state, pending operation and event: Next
// never returns an unnamed state, never leaves a final state, and a
// refused event leaves the status as it was.
func TestNextTotal(t *testing.T) {
	for s := WaitCommit; s <= Aborted; s++ {
		for p := OpNone; p <= OpDestroy; p++ {
			for ev := EvCommit; ev <= EvEnd; ev++ {
				from := Status{State: s, Pending: p}
				got, err := Next(from, ev)
				if _, ok := ParseState(got.State.String()); !ok {
					t.Errorf("Next(%v, %v) = unnamed state %v", from, ev, got)
				}
				if err != nil && got != from {
					t.Errorf("refused Next(%v, %v) changed the status to %v", from, ev, got)
				}
				if s.Final() && err == nil {
					t.Errorf("Next(%v, %v) left a final state", from, ev)
				}
				if err == nil && got.State.Final() && got.Pending != OpNone {
					t.Errorf("Next(%v, %v) = %v: final state with a pending operation", from, ev, got)
				}
			}
		}
	}
}

func TestNames(t *testing.T) {
	for s := WaitCommit; s <= Aborted; s++ {
		if got, ok := ParseState(s.String()); !ok || got != s {
			t.Errorf("ParseState(%q) = %v, %v", s.String(), got, ok)
		}
	}
	for o := OpNone; o <= OpDestroy; o++ {
		if got, ok := ParseOp(o.String()); !ok || got != o {
			t.Errorf("ParseOp(%q) = %v, %v", o.String(), got, ok)
		}
	}
	if _, ok := ParseState("BOGUS"); ok {
		t.Error("ParseState accepted BOGUS")
	}
	e := &TransitionError{From: Status{State: Confirmed, Pending: OpCancel}, Event: EvModify, Err: ErrPending}
	if want := "modify of a CONFIRMED reservation with cancel pending: another operation is waiting for commit or abort"; e.Error() != want {
		t.Errorf("got %q\nwant %q", e.Error(), want)
	}
}
