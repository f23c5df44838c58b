package attr

import "strconv"

// JobStateNum is a job's numeric state (spec 04 §4, 12 §2.1).
type JobStateNum int

// Job states.
const (
	StateTransit  JobStateNum = 0
	StateQueued   JobStateNum = 1
	StateHeld     JobStateNum = 2
	StateWaiting  JobStateNum = 3
	StateRunning  JobStateNum = 4
	StateExiting  JobStateNum = 5
	StateComplete JobStateNum = 6
	numJobStates              = 7
)

// Letter returns the job_state letter: T, Q, H, W, R, E, C, or S for a
// running job whose suspend flag is set, and U for an unknown state.
func (st JobStateNum) Letter(suspended bool) byte {
	if st == StateRunning && suspended {
		return 'S'
	}
	if st >= 0 && st < numJobStates {
		return "TQHWREC"[st]
	}
	return 'U'
}

// StateValue returns the job_state value for st.
func (st JobStateNum) StateValue(suspended bool) Value { return CharValue(st.Letter(suspended)) }

// Substate is a job's substate (attribute substate, spec 12 §2.2).
type Substate int

// Job substates.
const (
	SubTransIn       Substate = 0
	SubTransICM      Substate = 1
	SubTrnOut        Substate = 2
	SubTrnOutCM      Substate = 3
	SubQueued        Substate = 10
	SubPreStageIn    Substate = 11
	SubSyncRes       Substate = 13
	SubStageIn       Substate = 14
	SubStageGo       Substate = 15
	SubStageCmp      Substate = 16
	SubChkptGo       Substate = 17
	SubChkptCmp      Substate = 18
	SubHeld          Substate = 20
	SubSyncHold      Substate = 21
	SubDepnHold      Substate = 22
	SubWaiting       Substate = 30
	SubStageFail     Substate = 37
	SubPreRun        Substate = 40
	SubStarting      Substate = 41
	SubRunning       Substate = 42
	SubSuspend       Substate = 43
	SubExiting       Substate = 50
	SubStageOut      Substate = 51
	SubStageDel      Substate = 52
	SubExited        Substate = 53
	SubAbort         Substate = 54
	SubNoTermReque   Substate = 55
	SubPreObit       Substate = 57
	SubObit          Substate = 58
	SubComplete      Substate = 59
	SubRerun         Substate = 60
	SubRerun1        Substate = 61
	SubRerun2        Substate = 62
	SubRerun3        Substate = 63
	SubReturnStd     Substate = 70
	SubArrayTemplate Substate = 75
)

var substateNames = map[Substate]string{
	SubTransIn: "TRANSIN", SubTransICM: "TRANSICM", SubTrnOut: "TRNOUT", SubTrnOutCM: "TRNOUTCM",
	SubQueued: "QUEUED", SubPreStageIn: "PRESTAGEIN", SubSyncRes: "SYNCRES", SubStageIn: "STAGEIN",
	SubStageGo: "STAGEGO", SubStageCmp: "STAGECMP", SubChkptGo: "CHKPTGO", SubChkptCmp: "CHKPTCMP",
	SubHeld: "HELD", SubSyncHold: "SYNCHOLD", SubDepnHold: "DEPNHOLD", SubWaiting: "WAITING",
	SubStageFail: "STAGEFAIL", SubPreRun: "PRERUN", SubStarting: "STARTING", SubRunning: "RUNNING",
	SubSuspend: "SUSPEND", SubExiting: "EXITING", SubStageOut: "STAGEOUT", SubStageDel: "STAGEDEL",
	SubExited: "EXITED", SubAbort: "ABORT", SubNoTermReque: "NOTERM_REQUE", SubPreObit: "PREOBIT",
	SubObit: "OBIT", SubComplete: "COMPLETE", SubRerun: "RERUN", SubRerun1: "RERUN1",
	SubRerun2: "RERUN2", SubRerun3: "RERUN3", SubReturnStd: "RETURNSTD", SubArrayTemplate: "ARRAY",
}

// String returns the substate's name as used in logs (e.g. RUNNING).
func (s Substate) String() string {
	if n, ok := substateNames[s]; ok {
		return n
	}
	return strconv.Itoa(int(s))
}

// StateCount is the number of jobs per state, indexed by JobStateNum
// (COMPLETE is counted but not reported).
type StateCount [numJobStates]int

// String returns the state_count text of queues and the server:
// "Transit:n Queued:n Held:n Waiting:n Running:n Exiting:n " (six fields,
// each followed by a blank).
func (c StateCount) String() string {
	b := make([]byte, 0, 72)
	for i, name := range [...]string{"Transit", "Queued", "Held", "Waiting", "Running", "Exiting"} {
		b = append(b, name...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(c[i]), 10)
		b = append(b, ' ')
	}
	return string(b)
}
