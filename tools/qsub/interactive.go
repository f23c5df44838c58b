package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

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

// Sizes of the blocks exchanged with the MOM when the job starts.
const (
	jobIDBlock = 1047 // the job id, NUL-padded, from the MOM
	termBlock  = 80   // "TERM=<value>", to the MOM
	ccBlock    = 6    // VINTR VQUIT VERASE VKILL VEOF VSUSP
	winBlock   = 80   // "WINSIZE rows,cols,xpixel,ypixel"
)

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
		block := make([]byte, jobIDBlock)
		if _, err := io.ReadFull(c, block); err != nil {
			c.Close()
			continue
		}
		got := string(bytes.TrimRight(block, "\x00"))
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

	term := os.Getenv("TERM")
	if term == "" {
		term = "unknown"
	}
	out := make([]byte, 0, termBlock+ccBlock+winBlock)
	out = append(out, padded("TERM="+term, termBlock)...)
	cc := []byte{0x03, 0x1c, 0x7f, 0x15, 0x04, 0x1a}
	rows, cols, xpix, ypix := 24, 80, 0, 0
	var saved *unix.Termios
	if t, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		saved = t
		cc = []byte{t.Cc[unix.VINTR], t.Cc[unix.VQUIT], t.Cc[unix.VERASE], t.Cc[unix.VKILL], t.Cc[unix.VEOF], t.Cc[unix.VSUSP]}
	}
	if ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ); err == nil && ws.Row > 0 {
		rows, cols, xpix, ypix = int(ws.Row), int(ws.Col), int(ws.Xpixel), int(ws.Ypixel)
	}
	out = append(out, cc...)
	out = append(out, padded(fmt.Sprintf("WINSIZE %d,%d,%d,%d", rows, cols, xpix, ypix), winBlock)...)
	if _, err := nc.Write(out); err != nil {
		fmt.Fprintf(os.Stderr, "qsub: cannot send terminal settings: %v\n", err)
		return 1
	}
	fmt.Printf("qsub: job %s ready\n\n", id)

	if saved != nil {
		raw := *saved
		raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		raw.Oflag &^= unix.OPOST
		raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
		_ = unix.IoctlSetTermios(0, unix.TCSETS, &raw)
		defer unix.IoctlSetTermios(0, unix.TCSETS, saved)
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)

	go func() { _, _ = io.Copy(nc, os.Stdin) }()
	_, _ = io.Copy(os.Stdout, nc)
	if saved != nil {
		_ = unix.IoctlSetTermios(0, unix.TCSETS, saved)
	}
	fmt.Printf("\nqsub: job %s completed\n", id)
	return 0
}

func padded(s string, n int) []byte {
	b := make([]byte, n)
	copy(b, s)
	if len(s) >= n {
		b[n-1] = 0
	}
	return b
}
