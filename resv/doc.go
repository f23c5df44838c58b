// Package resv is the advance-reservation model of GoPBS (issue 17, seed
// 002, the PluS user's manual): the Reservation a server keeps, its
// states and the transitions between them as a pure state machine, the
// time syntax of the plus_* commands, the validation of a request, and
// the reservation records of the accounting file with their reader.
//
// The package knows nothing of connections, the store or the scheduler:
// pbs_server keeps Reservation values and moves them with Next; the
// commands parse what users type with ParseTime and ParseDuration; the
// server writes accounting lines with Record.Line and plus_account reads
// them with ReadRecords.
//
// # States
//
// A reservation made with -T waits for plus_commit or plus_abort
// (WaitCommit). Once committed (or made without -T) it is Confirmed; at
// its start it is Running and at its end Done. A cancelled reservation
// keeps its record (Cancelled, seed §3.1.5: cancelling releases the
// nodes only); a destroyed one is discarded (Destroyed), as is a
// creation that was aborted (Aborted). plus_modify, plus_cancel and
// plus_destroy with -T leave the reservation in its state with the
// operation pending until plus_commit applies it or plus_abort drops it
// (seed §2.4).
package resv
