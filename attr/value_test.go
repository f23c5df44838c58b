package attr

import (
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		typ  Type
		in   string
		want string
		code int
	}{
		// long
		{TypeLong, "42", "42", 0},
		{TypeLong, "+42", "42", 0},
		{TypeLong, "-7", "-7", 0},
		{TypeLong, "0", "0", 0},
		{TypeLong, "1795310482", "1795310482", 0},
		{TypeLong, "12a", "", pbseBadAtVal},
		{TypeLong, " 1", "", pbseBadAtVal},
		{TypeLong, "-", "", pbseBadAtVal},
		{TypeLong, "99999999999999999999", "9223372036854775807", 0},
		{TypeLong, "-99999999999999999999", "-9223372036854775808", 0},
		// boolean
		{TypeBool, "TRUE", "True", 0},
		{TypeBool, "true", "True", 0},
		{TypeBool, "t", "True", 0},
		{TypeBool, "1", "True", 0},
		{TypeBool, "y", "True", 0},
		{TypeBool, "Y", "True", 0},
		{TypeBool, "FALSE", "False", 0},
		{TypeBool, "f", "False", 0},
		{TypeBool, "0", "False", 0},
		{TypeBool, "n", "False", 0},
		{TypeBool, "yes", "", pbseBadAtVal},
		{TypeBool, "2", "", pbseBadAtVal},
		// char
		{TypeChar, "Q", "Q", 0},
		{TypeChar, "Route", "R", 0},
		// string
		{TypeString, "vm:/home/alice/longjob.e9", "vm:/home/alice/longjob.e9", 0},
		{TypeString, " x ", " x ", 0},
		// size
		{TypeSize, "100MB", "100mb", 0},
		{TypeSize, "100mb", "100mb", 0},
		{TypeSize, "1024", "1024b", 0},
		{TypeSize, "0x10kb", "16kb", 0},
		{TypeSize, "010k", "8kb", 0},
		{TypeSize, "2048kb", "2048kb", 0},
		{TypeSize, "1gb", "1gb", 0},
		{TypeSize, "0b", "0b", 0},
		{TypeSize, "5w", "5w", 0},
		{TypeSize, "5KW", "5kw", 0},
		{TypeSize, "8120kb", "8120kb", 0},
		{TypeSize, "24731708kb", "24731708kb", 0},
		{TypeSize, "3t", "3tb", 0},
		{TypeSize, "3p", "3pb", 0},
		{TypeSize, "10x", "", pbseBadAtVal},
		{TypeSize, "10kbb", "", pbseBadAtVal},
		{TypeSize, "kb", "0kb", 0},
		{TypeSize, "b", "0b", 0},
		{TypeSize, "W", "0w", 0},
		{TypeSize, "+", "", pbseBadAtVal},
		{TypeSize, " kb", "", pbseBadAtVal},
		{TypeSize, "0x", "", pbseBadAtVal},
		{TypeSize, " 12k", "12kb", 0},
		{TypeSize, "08", "", pbseBadAtVal},
		{TypeSize, "-5kb", "", pbseBadAtVal},
		// time
		{TypeTime, "1:00:00", "01:00:00", 0},
		{TypeTime, "01:00:00", "01:00:00", 0},
		{TypeTime, "90", "00:01:30", 0},
		{TypeTime, "2:00:00:00", "48:00:00", 0},
		{TypeTime, "00:00:00.6", "00:00:01", 0},
		{TypeTime, "00:00:00.4", "00:00:00", 0},
		{TypeTime, "360000", "100:00:00", 0},
		{TypeTime, "00:05:00", "00:05:00", 0},
		{TypeTime, "5:", "00:05:00", 0},
		{TypeTime, "1:2:3:4:5", "", pbseBadAtVal},
		{TypeTime, "1h", "", pbseBadAtVal},
		{TypeTime, "1.5.5", "", pbseBadAtVal},
		{TypeTime, "1.5:5", "", pbseBadAtVal},
		{TypeTime, "-5", "", pbseBadAtVal},
		{TypeTime, "99999999999999999999", "", pbseBadAtVal},
		// hold
		{TypeHold, "n", "n", 0},
		{TypeHold, "u", "u", 0},
		{TypeHold, "uo", "ou", 0},
		{TypeHold, "uos", "sou", 0},
		{TypeHold, "s", "s", 0},
		{TypeHold, "uun", "n", 0},
		{TypeHold, "nu", "u", 0},
		{TypeHold, "x", "", pbseBadAtVal},
		{TypeHold, "U", "", pbseBadAtVal},
		// string arrays
		{TypeStringArray, "alice@vm", "alice@vm", 0},
		{TypeStringArray, "a,b", "a,b", 0},
		{TypeStringArray, "a\nb\n", "a,b", 0},
		{TypeStringArray, " a , b ,", "a,b", 0},
		{TypeStringArray, `a\,b,c`, `a\,b,c`, 0},
		{TypeStringArray, `X=\"q\"`, `X=\"q\"`, 0},
		{TypeStringArray, `x\ `, `x `, 0},
		// node state
		{TypeNodeState, "free", "free", 0},
		{TypeNodeState, "offline", "offline", 0},
		{TypeNodeState, "offline,down", "down,offline", 0},
		{TypeNodeState, "busy,state-unknown,job-exclusive", "state-unknown,job-exclusive,busy", 0},
		{TypeNodeState, "free,down", "", pbseMutualEx},
		{TypeNodeState, "sleepy", "", pbseBadNdAtVal},
		// node type
		{TypeNodeType, "cluster", "cluster", 0},
		{TypeNodeType, "time-shared", "time-shared", 0},
		{TypeNodeType, "other", "", pbseBadNdAtVal},
		// queue type
		{TypeQueueType, "execution", "Execution", 0},
		{TypeQueueType, "e", "Execution", 0},
		{TypeQueueType, "EXEC", "Execution", 0},
		{TypeQueueType, "Route", "Route", 0},
		{TypeQueueType, "r", "Route", 0},
		{TypeQueueType, "x", "", pbseBadAtVal},
		{TypeQueueType, "executions", "", pbseBadAtVal},
		// interactive: port to clients as boolean
		{TypeInteractive, "55317", "True", 0},
		{TypeInteractive, "0", "False", 0},
		// depend
		{TypeDepend, "afterok:1.vm", "afterok:1.vm", 0},
		{TypeDepend, "afterok:1.vm@vm", "afterok:1.vm@vm", 0},
		{TypeDepend, "beforeok:2.vm@vm", "beforeok:2.vm@vm", 0},
		{TypeDepend, "on:1", "on:1", 0},
		{TypeDepend, "afterokarray:21[].vm@vm", "afterokarray:21[].vm@vm", 0},
		{TypeDepend, "afterok:1.vm,afterok:2.vm@s", "afterok:1.vm:2.vm@s", 0},
		{TypeDepend, `after:1.a\:b@s\:1`, `after:1.a\:b@s\:1`, 0},
		{TypeDepend, "afterok:12", "", pbseBadAtVal},
		{TypeDepend, "afterok", "", pbseBadAtVal},
		{TypeDepend, "whenever:1.vm", "", pbseBadAtVal},
		{TypeDepend, "syncwith:1.vm,afterok:2.vm", "", pbseBadAtVal},
		{TypeDepend, "afterokarray:1[].vm,afterok:2.vm", "", pbseBadAtVal},
		{TypeDepend, "synccount:2,synccount:3", "", pbseBadAtVal},
		// node spec
		{TypeNodeSpec, "1", "1", 0},
		{TypeNodeSpec, "1:ppn=1", "1:ppn=1", 0},
		{TypeNodeSpec, "vm:ppn=1+vm2:ppn=1", "vm:ppn=1+vm2:ppn=1", 0},
		{TypeNodeSpec, "2:bigmem:ppn=4+node01#shared", "2:bigmem:ppn=4+node01#shared", 0},
		{TypeNodeSpec, "1#shared", "1#shared", 0},
		{TypeNodeSpec, "1+", "", pbseBadAtVal},
		{TypeNodeSpec, "1:ppn=x", "", pbseBadAtVal},
		{TypeNodeSpec, "_bad", "", pbseBadAtVal},
		{TypeNodeSpec, "1:", "", pbseBadAtVal},
	}
	for _, tt := range tests {
		v, err := Parse(tt.typ, tt.in)
		if got := Code(err); got != tt.code {
			t.Errorf("Parse(%v, %q) error %v, want code %d", tt.typ, tt.in, err, tt.code)
			continue
		}
		if err != nil {
			continue
		}
		if got := v.String(); got != tt.want {
			t.Errorf("Parse(%v, %q).String() = %q, want %q", tt.typ, tt.in, got, tt.want)
		}
		// The encoded form parses back to the same value.
		// (An escaped trailing blank is not re-escaped, as in TORQUE.)
		if tt.want != "" && tt.typ != TypeInteractive && !strings.HasSuffix(tt.want, " ") {
			w, err := Parse(tt.typ, tt.want)
			if err != nil || !w.Equal(v) {
				t.Errorf("round trip of %q: %v, %v (want %v)", tt.want, w, err, v)
			}
		}
	}
}

func TestEmptyIsUnset(t *testing.T) {
	for ty := TypeLong; ty < numTypes; ty++ {
		if ty == TypeResourceList {
			continue
		}
		v, err := Parse(ty, "")
		if err != nil || v.IsSet() {
			t.Errorf("Parse(%v, \"\") = %v, %v; want unset", ty, v, err)
		}
	}
}

func TestStates(t *testing.T) {
	var c StateCount
	if got, want := c.String(), "Transit:0 Queued:0 Held:0 Waiting:0 Running:0 Exiting:0 "; got != want {
		t.Errorf("StateCount = %q, want %q", got, want)
	}
	c[StateQueued], c[StateHeld], c[StateWaiting], c[StateComplete] = 2, 6, 1, 3
	if got, want := c.String(), "Transit:0 Queued:2 Held:6 Waiting:1 Running:0 Exiting:0 "; got != want {
		t.Errorf("StateCount = %q, want %q", got, want)
	}
	for st, want := range map[JobStateNum]byte{StateTransit: 'T', StateQueued: 'Q', StateHeld: 'H', StateWaiting: 'W', StateRunning: 'R', StateExiting: 'E', StateComplete: 'C', 9: 'U', -1: 'U'} {
		if got := st.Letter(false); got != want {
			t.Errorf("state %d letter %c, want %c", st, got, want)
		}
	}
	if StateRunning.Letter(true) != 'S' || StateQueued.Letter(true) != 'Q' {
		t.Error("suspended letter wrong")
	}
	if SubDepnHold.String() != "DEPNHOLD" || Substate(99).String() != "99" {
		t.Error("substate names wrong")
	}
}
