package batchreq

import (
	"strings"
	"testing"
)

// TestCapacities checks every bounded request string at its capacity
// (accepted) and one byte over (PBSE_DISPROTO). The capacities are
// inclusive (spec 01 §4).
func TestCapacities(t *testing.T) {
	str := func(n int) string { return string(encodeStr(strings.Repeat("x", n))) }
	tests := []struct {
		name     string
		capacity int
		wire     func(s string) string // s is an encoded string of the tested length
	}{
		{"header user", 33, func(s string) string { return "+2+12+21" + s + "+0+0+0" }},
		{"QueueJob job id", 1047, func(s string) string { return "+2+1+1+5alice" + s + "+0+0+0" }},
		{"QueueJob destination", 1047, func(s string) string { return "+2+1+1+5alice+0" + s + "+0+0" }},
		{"JobScript job id", 1047, func(s string) string { return "+2+1+3+5alice+0+0+0" + s + "+0+0" }},
		{"Commit job id", 1047, func(s string) string { return "+2+1+5+5alice" + s + "+0" }},
		{"Manage object name", 1047, func(s string) string { return "+2+1+9+4root+2+1" + s + "+0+0" }},
		{"MessJob job id", 1047, func(s string) string { return "+2+12+10+5alice" + s + "+1+1m+0" }},
		{"MoveJob destination", 1025, func(s string) string { return "+2+12+12+5alice+49.vm" + s + "+0" }},
		{"RunJob job id", 1047, func(s string) string { return "+2+12+15+5alice" + s + "+0+0+0" }},
		{"SignalJob signal", 17, func(s string) string { return "+2+12+18+5alice+49.vm" + s + "+0" }},
		{"Status id", 1047, func(s string) string { return "+2+12+19+5alice" + s + "+0+0" }},
		{"TrackJob location", 1025, func(s string) string { return "+2+12+22+4root+49.vm+1" + s + "+0+0" }},
		{"RegistDep owner", 32, func(s string) string { return "+2+12+52+4root" + s + "+41.vm+42.vm+1+1+0+0" }},
		{"RegistDep parent", 1046, func(s string) string { return "+2+12+52+4root+1a" + s + "+42.vm+1+1+0+0" }},
		{"RegistDep child", 2084, func(s string) string { return "+2+12+52+4root+1a+41.vm" + s + "+1+1+0+0" }},
		{"JobObit job id", 1046, func(s string) string { return "+2+12+56+7pbs_mom" + s + "+0+0+0" }},
		{"AltAuthenUser credential", 2049, func(s string) string { return "+2+12+61+5alice+1" + s + "+0" }},
		{"GpuCtrl node", 1025, func(s string) string { return "+2+12+62+4root" + s + "+10+1+0+0+0" }},
		{"GpuCtrl gpu id", 17, func(s string) string { return "+2+12+62+4root+2vm" + s + "+1+0+0+0" }},
	}
	momTests := []struct {
		name     string
		capacity int
		wire     func(s string) string
	}{
		{"ReturnFiles job id", 1046, func(s string) string { return "+2+12+532+10PBS_Server" + s + "+1+1+0" }},
		{"CopyFiles job id", 1046, func(s string) string { return "+2+12+542+10PBS_Server" + s + "+1a+1a+0+1+0+0" }},
		{"CopyFiles owner", 32, func(s string) string { return "+2+12+542+10PBS_Server+1j" + s + "+1a+0+1+0+0" }},
		{"CopyFiles exec user", 32, func(s string) string { return "+2+12+542+10PBS_Server+1j+1a" + s + "+0+1+0+0" }},
		{"CopyFiles exec group", 16, func(s string) string { return "+2+12+542+10PBS_Server+1j+1a+1a" + s + "+1+0+0" }},
	}
	check := func(name string, capacity int, wire func(string) string, read func(string) error) {
		if err := read(wire(str(capacity))); err != nil {
			t.Errorf("%s: %d bytes refused: %v", name, capacity, err)
		}
		if err := read(wire(str(capacity + 1))); ErrorCode(err) != PBSE_DISPROTO || err == nil {
			t.Errorf("%s: %d bytes: err = %v, want DISPROTO", name, capacity+1, err)
		}
	}
	for _, tc := range tests {
		check(tc.name, tc.capacity, tc.wire, func(w string) error { _, err := ReadServerRequest(reader(w)); return err })
	}
	for _, tc := range momTests {
		check(tc.name, tc.capacity, tc.wire, func(w string) error { _, err := ReadRequest(reader(w)); return err })
	}
	// Reply capacities of the client: Queue job id, Status object name
	// 1047, Locate 1025.
	replies := []struct {
		name     string
		capacity int
		wire     func(s string) string
	}{
		{"Queue reply job id", 1047, func(s string) string { return "+2+1+0+0+2" + s }},
		{"Status object name", 1047, func(s string) string { return "+2+1+0+0+6+1+2" + s + "+0" }},
		{"Locate location", 1025, func(s string) string { return "+2+1+0+0+8" + s }},
	}
	for _, tc := range replies {
		if _, err := ReadReply(reader(tc.wire(str(tc.capacity)))); err != nil {
			t.Errorf("%s: %d bytes refused: %v", tc.name, tc.capacity, err)
		}
		if _, err := ReadReply(reader(tc.wire(str(tc.capacity + 1)))); err == nil {
			t.Errorf("%s: %d bytes accepted", tc.name, tc.capacity+1)
		}
	}
}

func encodeStr(s string) []byte {
	q := &JobID{ID: s}
	return q.Append(nil)
}

// TestAttrBudget checks the size budget of request attribute lists
// (spec 02 §2.1): each string is bounded by what is left of size.
func TestAttrBudget(t *testing.T) {
	// Manager request around one entry: name "ab", resource "cd",
	// value "ef" need 3+3+3 = 9.
	wire := func(size string) string {
		return "+2+1+9+4root+2+1+5batch+1" + size + "+2ab+1+2cd+2ef+0+0"
	}
	for _, tc := range []struct {
		size string
		ok   bool
	}{
		{"+9", true}, {"2+50", true},
		// The last string's terminator is not checked: capacity is
		// inclusive.
		{"+8", true},
		// 5-3 leaves 2 for "cd", whose terminator makes the remainder
		// wrap: the value is unbounded.
		{"+5", true},
		// 1 or 0 left for "cd".
		{"+4", false}, {"+3", false},
		// The name fills the budget exactly: the remainder wraps.
		{"+2", true},
		{"+1", false},
	} {
		_, err := ReadServerRequest(reader(wire(tc.size)))
		if (err == nil) != tc.ok {
			t.Errorf("size %s: err = %v, want ok=%v", tc.size, err, tc.ok)
		}
	}
	// Replies ignore the size.
	if _, err := ReadReply(reader("+2+1+0+0+6+1+0+2vm+1+1+2ab+1+2cd+2ef+0")); err != nil {
		t.Errorf("reply with size 1: %v", err)
	}
}
