package main

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"gopbs/internal/capture/capturetest"
	"gopbs/internal/e2e"
)

// interactiveCapture returns the bytes the MOM sent to qsub -I and those
// qsub answered in capture 81.
func interactiveCapture(t *testing.T) (fromMOM, fromQsub []byte) {
	t.Helper()
	sc, c := capturetest.Scenario(t, 81)
	for _, cn := range c.Conns {
		if int(cn.Server.Port()) == sc.QsubListenPort {
			return cn.Stream(true), cn.Stream(false)
		}
	}
	t.Fatalf("capture %s has no connection to qsub's port %d", sc.Pcap, sc.QsubListenPort)
	return nil, nil
}

// TestInteractiveBlocksCapture checks the handshake with the MOM byte for
// byte against capture 81 (qsub under env -i on a 24x80 terminal): the
// job id block is read as 9.vm, and qsub's answer equals the captured
// one up to the NUL ending each string block. TORQUE's qsub left the
// bytes after those NULs uninitialised (the capture has stack bytes
// there); GoPBS zeroes them.
func TestInteractiveBlocksCapture(t *testing.T) {
	fromMOM, fromQsub := interactiveCapture(t)
	if len(fromMOM) < jobIDBlock || len(fromQsub) < termBlock+ccBlock+winBlock {
		t.Fatalf("capture: %d bytes from the MOM, %d from qsub", len(fromMOM), len(fromQsub))
	}
	id, err := readJobID(bytes.NewReader(fromMOM[:jobIDBlock]))
	if err != nil || id != "9.vm" {
		t.Errorf("job id %q, %v", id, err)
	}
	got := terminal{term: "unknown", cc: defaultControlChars, size: unix.Winsize{Row: 24, Col: 80}}.blocks()
	want := fromQsub[:termBlock+ccBlock+winBlock]
	if len(got) != len(want) {
		t.Fatalf("%d bytes, want %d", len(got), len(want))
	}
	for _, b := range []struct {
		name     string
		from, to int
		str      bool // a NUL-terminated string, uninitialised after its NUL
	}{
		{"TERM", 0, termBlock, true},
		{"control characters", termBlock, termBlock + ccBlock, false},
		{"WINSIZE", termBlock + ccBlock, termBlock + ccBlock + winBlock, true},
	} {
		g, w := got[b.from:b.to], want[b.from:b.to]
		if b.str {
			end := bytes.IndexByte(w, 0) + 1
			if end == 0 {
				t.Fatalf("captured %s block has no NUL: %q", b.name, w)
			}
			if rest := g[end:]; !bytes.Equal(rest, make([]byte, len(rest))) {
				t.Errorf("%s block not NUL-padded: %q", b.name, g)
			}
			g, w = g[:end], w[:end]
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s block %q, want %q", b.name, g, w)
		}
	}
}

func TestReadJobID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"12.srv" + strings.Repeat("\x00", jobIDBlock-6), "12.srv", true},
		{strings.Repeat("x", jobIDBlock), strings.Repeat("x", jobIDBlock), true},
		{"12.srv\x00", "", false}, // cut short
		{"", "", false},
	} {
		got, err := readJobID(strings.NewReader(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("readJobID(%d bytes) = %q, %v", len(tc.in), got, err)
		}
	}
}

func TestTerminalBlocks(t *testing.T) {
	long := strings.Repeat("t", 100)
	for _, tc := range []struct {
		t          terminal
		term, size string
	}{
		{terminal{term: "xterm", cc: defaultControlChars, size: unix.Winsize{Row: 50, Col: 132, Xpixel: 1, Ypixel: 2}}, "TERM=xterm", "WINSIZE 50,132,1,2"},
		// a TERM too long for the block is cut, NUL-terminated
		{terminal{term: long, cc: defaultControlChars, size: defaultWinsize}, ("TERM=" + long)[:termBlock-1], "WINSIZE 24,80,0,0"},
	} {
		b := tc.t.blocks()
		if len(b) != termBlock+ccBlock+winBlock {
			t.Fatalf("%d bytes", len(b))
		}
		if got := string(bytes.TrimRight(b[:termBlock], "\x00")); got != tc.term || b[termBlock-1] != 0 {
			t.Errorf("TERM block %q, want %q", b[:termBlock], tc.term)
		}
		if !bytes.Equal(b[termBlock:termBlock+ccBlock], tc.t.cc[:]) {
			t.Errorf("control characters %q", b[termBlock:termBlock+ccBlock])
		}
		if got := string(bytes.TrimRight(b[termBlock+ccBlock:], "\x00")); got != tc.size {
			t.Errorf("WINSIZE block %q, want %q", got, tc.size)
		}
	}
}

// TestTerminalOf reads the settings of a real terminal (its size and a
// changed interrupt character) and gives the defaults for a
// non-terminal.
func TestTerminalOf(t *testing.T) {
	term, err := e2e.OpenTerminal(33, 101)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer term.Close()
	fd := int(term.Slave().Fd())
	modes, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	modes.Cc[unix.VINTR] = 0x07
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, modes); err != nil {
		t.Fatal(err)
	}
	got, saved := terminalOf(fd, "")
	want := terminal{term: "unknown", cc: [ccBlock]byte{0x07, 0x1c, 0x7f, 0x15, 0x04, 0x1a}, size: unix.Winsize{Row: 33, Col: 101}}
	if got != want || saved == nil {
		t.Errorf("terminalOf = %+v, %v; want %+v", got, saved != nil, want)
	}
	raw := rawModes(*saved)
	if raw.Lflag&(unix.ECHO|unix.ICANON|unix.ISIG) != 0 || raw.Oflag&unix.OPOST != 0 || raw.Cc[unix.VMIN] != 1 {
		t.Errorf("raw modes %+v", raw)
	}

	null, err := unix.Open("/dev/null", unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(null)
	got, saved = terminalOf(null, "vt100")
	if want := (terminal{term: "vt100", cc: defaultControlChars, size: defaultWinsize}); got != want || saved != nil {
		t.Errorf("terminalOf(/dev/null) = %+v, %v; want %+v", got, saved != nil, want)
	}
}
