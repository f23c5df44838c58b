package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// interactiveListener is the socket "qsub -I" advertises in the
// interactive attribute; the job's MOM connects back to it.
func interactiveListener() (net.Listener, int, error) {
	ln, err := net.Listen("tcp4", ":0")
	if err != nil {
		return nil, 0, err
	}
	return ln, ln.Addr().(*net.TCPAddr).Port, nil
}

// Sizes of the blocks exchanged with the MOM when the job starts
// (capture 81): no DIS, raw fixed-size blocks on the MOM's connection.
const (
	jobIDBlock = 1047 // the job id, NUL-padded, from the MOM
	termBlock  = 80   // "TERM=<value>", NUL-terminated, to the MOM
	ccBlock    = 6    // VINTR VQUIT VERASE VKILL VEOF VSUSP
	winBlock   = 80   // "WINSIZE rows,cols,xpixel,ypixel", NUL-padded
)

// defaultControlChars are the control characters sent when standard
// input is not a terminal: ^C ^\ DEL ^U ^D ^Z, those of a fresh terminal.
var defaultControlChars = [ccBlock]byte{0x03, 0x1c, 0x7f, 0x15, 0x04, 0x1a}

// defaultWinsize is the size sent when standard input is not a terminal
// (or reports no size).
var defaultWinsize = unix.Winsize{Row: 24, Col: 80}

// terminal is what qsub tells the MOM of its user's terminal.
type terminal struct {
	term string        // TERM's value; "unknown" when unset
	cc   [ccBlock]byte // VINTR, VQUIT, VERASE, VKILL, VEOF, VSUSP
	size unix.Winsize
}

// terminalOf returns the terminal settings qsub sends for the terminal on
// fd (the defaults when fd is not one), TERM's value being term, and the
// terminal's modes to restore after the session (nil when fd is not a
// terminal).
func terminalOf(fd int, term string) (terminal, *unix.Termios) {
	if term == "" {
		term = "unknown"
	}
	t := terminal{term: term, cc: defaultControlChars, size: defaultWinsize}
	modes, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return t, nil
	}
	for i, idx := range []int{unix.VINTR, unix.VQUIT, unix.VERASE, unix.VKILL, unix.VEOF, unix.VSUSP} {
		t.cc[i] = modes.Cc[idx]
	}
	if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Row > 0 && ws.Col > 0 {
		t.size = *ws
	}
	return t, modes
}

// blocks encodes the three blocks qsub answers the MOM's job id with:
// 80 bytes "TERM=<value>" (NUL-terminated; TORQUE's qsub leaves the rest
// of the block uninitialised, GoPBS zeroes it), the 6 control characters,
// and 80 bytes "WINSIZE rows,cols,xpixel,ypixel", NUL-padded.
func (t terminal) blocks() []byte {
	out := make([]byte, 0, termBlock+ccBlock+winBlock)
	out = append(out, padded("TERM="+t.term, termBlock)...)
	out = append(out, t.cc[:]...)
	ws := fmt.Sprintf("WINSIZE %d,%d,%d,%d", t.size.Row, t.size.Col, t.size.Xpixel, t.size.Ypixel)
	return append(out, padded(ws, winBlock)...)
}

// readJobID reads the MOM's first block, the job id NUL-padded to
// jobIDBlock bytes.
func readJobID(r io.Reader) (string, error) {
	block := make([]byte, jobIDBlock)
	if _, err := io.ReadFull(r, block); err != nil {
		return "", fmt.Errorf("read the job id block: %w", err)
	}
	if i := bytes.IndexByte(block, 0); i >= 0 {
		block = block[:i]
	}
	return string(block), nil
}

// rawModes returns modes with the terminal's input processing, echo,
// signals and output processing switched off: the job's terminal on the
// MOM does all of that.
func rawModes(modes unix.Termios) *unix.Termios {
	modes.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	modes.Oflag &^= unix.OPOST
	modes.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	modes.Cc[unix.VMIN], modes.Cc[unix.VTIME] = 1, 0
	return &modes
}

// runInteractive waits for the MOM to connect back for job id, sends it
// the terminal's type, control characters and size, then relays the
// terminal to the job's shell until the MOM closes the connection.
func runInteractive(ln net.Listener, id string) int {
	fmt.Printf("qsub: waiting for job %s to start\n", id)
	var nc net.Conn
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintf(os.Stderr, "qsub: accept error: %v\n", err)
			return 1
		}
		got, err := readJobID(c)
		if err != nil {
			c.Close()
			continue
		}
		if got != id {
			fmt.Fprintf(os.Stderr, "qsub: invalid job name from execution server: %s\n", got)
			c.Close()
			continue
		}
		nc = c
		break
	}
	ln.Close()
	defer nc.Close()

	term, saved := terminalOf(int(os.Stdin.Fd()), os.Getenv("TERM"))
	if _, err := nc.Write(term.blocks()); err != nil {
		fmt.Fprintf(os.Stderr, "qsub: cannot send terminal settings: %v\n", err)
		return 1
	}
	fmt.Printf("qsub: job %s ready\n\n", id)

	if saved != nil {
		_ = unix.IoctlSetTermios(0, unix.TCSETS, rawModes(*saved))
	}
	go func() { _, _ = io.Copy(nc, os.Stdin) }()
	_, _ = io.Copy(os.Stdout, nc)
	if saved != nil {
		_ = unix.IoctlSetTermios(0, unix.TCSETS, saved)
	}
	fmt.Printf("\nqsub: job %s completed\n", id)
	return 0
}

// padded returns s in an n-byte block, NUL-padded; a longer s is cut to
// leave a terminating NUL.
func padded(s string, n int) []byte {
	b := make([]byte, n)
	copy(b, s)
	if len(s) >= n {
		b[n-1] = 0
	}
	return b
}
