package resv

import (
	"errors"
	"fmt"
)

// State is where a reservation is in its life.
type State int

// The states of a reservation. The numbers are stored and travel on the
// wire; do not renumber.
const (
	WaitCommit State = iota + 1 // made with -T, waiting for plus_commit or plus_abort
	Confirmed                   // committed, before its start
	Running                     // between its start and its end
	Done                        // its end has passed
	Cancelled                   // cancelled: nodes released, record kept
	Destroyed                   // discarded with plus_destroy
	Aborted                     // its creation was aborted
	// Unconfirmed: made for a partition whose scheduler was not running
	// (seed 003, interface 8); it holds no nodes until the server can
	// reach that scheduler and confirms it.
	Unconfirmed
)

var stateNames = [...]string{
	WaitCommit:  "WAIT_COMMIT",
	Confirmed:   "CONFIRMED",
	Running:     "RUNNING",
	Done:        "DONE",
	Cancelled:   "CANCELED",
	Destroyed:   "DESTROYED",
	Aborted:     "ABORTED",
	Unconfirmed: "UNCONFIRMED",
}

// String returns the name plus_status prints ("CONFIRMED", ...).
func (s State) String() string {
	if s > 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ParseState returns the state of a name as String prints it.
func ParseState(name string) (State, bool) {
	for s := WaitCommit; int(s) < len(stateNames); s++ {
		if stateNames[s] == name {
			return s, true
		}
	}
	return 0, false
}

// Final reports whether no event leaves the state: the record is gone.
func (s State) Final() bool { return s == Destroyed || s == Aborted }

// Op is an operation waiting for plus_commit or plus_abort.
type Op int

// Pending operations. OpNone means nothing is waiting.
const (
	OpNone    Op = iota
	OpCreate     // plus_reserve -T
	OpModify     // plus_modify -T
	OpCancel     // plus_cancel -T
	OpDestroy    // plus_destroy -T
)

var opNames = [...]string{OpNone: "", OpCreate: "reserve", OpModify: "modify", OpCancel: "cancel", OpDestroy: "destroy"}

// String names the operation as the commands do ("reserve", "modify",
// "cancel", "destroy"; "" for OpNone).
func (o Op) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// ParseOp is the inverse of Op.String.
func ParseOp(name string) (Op, bool) {
	for o := OpNone; o <= OpDestroy; o++ {
		if opNames[o] == name {
			return o, true
		}
	}
	return 0, false
}

// Event is something that happens to a reservation: a command, the
// clock reaching its start or end, or a pending operation timing out.
type Event int

// Events of the state machine.
const (
	EvCommit   Event = iota + 1 // plus_commit
	EvAbort                     // plus_abort
	EvTimeout                   // a pending operation aborted automatically (seed §2.4)
	EvModify                    // plus_modify
	EvModifyT                   // plus_modify -T
	EvCancel                    // plus_cancel
	EvCancelT                   // plus_cancel -T
	EvDestroy                   // plus_destroy
	EvDestroyT                  // plus_destroy -T
	EvStart                     // the clock reached the start
	EvEnd                       // the clock reached the end
	EvConfirm                   // the server confirmed an unconfirmed reservation
)

var eventNames = [...]string{
	EvCommit: "commit", EvAbort: "abort", EvTimeout: "timeout", EvModify: "modify", EvModifyT: "modify -T",
	EvCancel: "cancel", EvCancelT: "cancel -T", EvDestroy: "destroy", EvDestroyT: "destroy -T",
	EvStart: "start", EvEnd: "end", EvConfirm: "confirm",
}

func (e Event) String() string {
	if e > 0 && int(e) < len(eventNames) {
		return eventNames[e]
	}
	return fmt.Sprintf("Event(%d)", int(e))
}

// Status is the part of a reservation the state machine moves: its state
// and the operation waiting for commit or abort.
type Status struct {
	State   State
	Pending Op
}

// Errors of refused transitions; a *TransitionError wraps one of them.
var (
	ErrNothingPending = errors.New("no operation is waiting for commit or abort")
	ErrPending        = errors.New("another operation is waiting for commit or abort")
	ErrWrongState     = errors.New("not allowed in this state")
	ErrGone           = errors.New("the reservation no longer exists")
)

// TransitionError is a refused event.
type TransitionError struct {
	From  Status
	Event Event
	Err   error
}

func (e *TransitionError) Error() string {
	pending := ""
	if e.From.Pending != OpNone {
		pending = " with " + e.From.Pending.String() + " pending"
	}
	return fmt.Sprintf("%s of a %s reservation%s: %v", e.Event, e.From.State, pending, e.Err)
}

func (e *TransitionError) Unwrap() error { return e.Err }

// Next returns the status after event ev, or a *TransitionError if the
// event is not allowed (seed §2.3, §2.4):
//
//   - A reservation waiting for its creation to be committed accepts only
//     commit (it becomes Confirmed), abort, timeout and its start (all
//     three abort it: an uncommitted reservation never starts).
//   - A pending modify, cancel or destroy is applied by commit and dropped
//     by abort or timeout; the start of the reservation aborts it. While
//     one is pending every other command is refused.
//   - Modify, cancel and destroy apply at once without -T, or become the
//     pending operation with it. Confirmed and Running reservations may
//     be modified and cancelled; any reservation may be destroyed.
//   - An Unconfirmed reservation (made for a partition whose scheduler
//     was down) becomes Confirmed by confirm; until then its start
//     changes nothing, its end cancels it, and it may be cancelled and
//     destroyed but not modified (it has no nodes to modify).
//   - Done and Cancelled reservations accept only destroy.
//   - Destroyed and Aborted are final.
func Next(s Status, ev Event) (Status, error) {
	refuse := func(err error) (Status, error) { return s, &TransitionError{From: s, Event: ev, Err: err} }
	if s.State.Final() {
		return refuse(ErrGone)
	}
	if s.State == WaitCommit {
		switch ev {
		case EvCommit:
			return Status{State: Confirmed}, nil
		case EvAbort, EvTimeout, EvStart, EvEnd:
			return Status{State: Aborted}, nil
		}
		return refuse(ErrPending)
	}
	if s.Pending != OpNone {
		switch ev {
		case EvCommit:
			switch s.Pending {
			case OpCancel:
				return Status{State: Cancelled}, nil
			case OpDestroy:
				return Status{State: Destroyed}, nil
			}
			return Status{State: s.State}, nil
		case EvAbort, EvTimeout:
			return Status{State: s.State}, nil
		case EvStart, EvEnd:
			if next, err := Next(Status{State: s.State}, ev); err == nil {
				return next, nil
			}
			return refuse(ErrWrongState)
		}
		return refuse(ErrPending)
	}
	switch ev {
	case EvCommit, EvAbort, EvTimeout:
		return refuse(ErrNothingPending)
	case EvDestroy:
		return Status{State: Destroyed}, nil
	case EvDestroyT:
		return Status{State: s.State, Pending: OpDestroy}, nil
	}
	switch s.State {
	case Confirmed, Running:
		switch ev {
		case EvModify:
			return s, nil
		case EvModifyT:
			return Status{State: s.State, Pending: OpModify}, nil
		case EvCancel:
			return Status{State: Cancelled}, nil
		case EvCancelT:
			return Status{State: s.State, Pending: OpCancel}, nil
		case EvStart:
			if s.State == Confirmed {
				return Status{State: Running}, nil
			}
		case EvEnd:
			return Status{State: Done}, nil
		}
	case Unconfirmed:
		switch ev {
		case EvConfirm:
			return Status{State: Confirmed}, nil
		case EvStart:
			return s, nil // no nodes to begin on: it waits for its confirmation
		case EvCancel:
			return Status{State: Cancelled}, nil
		case EvCancelT:
			return Status{State: s.State, Pending: OpCancel}, nil
		case EvEnd:
			return Status{State: Cancelled}, nil // never confirmed
		}
	case Done, Cancelled:
		if ev == EvStart || ev == EvEnd {
			return s, nil // the clock passing a dead reservation changes nothing
		}
	}
	return refuse(ErrWrongState)
}
