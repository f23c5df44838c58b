package svrconn

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// exchange runs fn against a peer that expects the request bytes want and
// answers with reply.
func exchange(t *testing.T, want, reply string, fn func(c *Conn) error) error {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	a.SetDeadline(time.Now().Add(5 * time.Second))
	errc := make(chan error, 1)
	go func() {
		c := New(b)
		defer c.Close()
		errc <- fn(c)
	}()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(a, got); err != nil {
		t.Fatalf("reading request: %v", err)
	}
	if string(got) != want {
		t.Fatalf("request %q, want %q", got, want)
	}
	a.Write([]byte(reply))
	return <-errc
}

func TestRequests(t *testing.T) {
	tests := []struct {
		name, want, reply string
		fn                func(c *Conn) error
	}{
		{"delete with message", "+2+1+6+9Scheduler+1+2+44.vm+0+12+19Job could never run", "+2+1+0+0+1",
			func(c *Conn) error { return c.DeleteJob("4.vm", "Job could never run") }},
		{"run on a node", "+2+12+15+9Scheduler+44.vm+3n01+0+0", "+2+1+0+0+1",
			func(c *Conn) error { return c.RunJob("4.vm", "n01") }},
		{"move to an execution queue", "+2+12+12+9Scheduler+44.vm+5batch+0", "+2+1+0+0+1",
			func(c *Conn) error { return c.MoveJob("4.vm", "batch") }},
		{"status queue", "+2+12+20+9Scheduler+0+0+0", "+2+1+0+0+6+0",
			func(c *Conn) error { _, err := c.StatusQueue(); return err }},
	}
	for _, tt := range tests {
		if err := exchange(t, tt.want, tt.reply, tt.fn); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestReplyErrors(t *testing.T) {
	// Error with text (choice 7): the text is the message.
	err := exchange(t, "+2+12+15+9Scheduler+44.vm+0+0+0", "+2+15+15044+0+72+12No nodes now",
		func(c *Conn) error { return c.RunJob("4.vm", "") })
	var re *ReplyError
	if !errors.As(err, &re) || re.Code != 15044 || re.Error() != "No nodes now" {
		t.Errorf("err = %#v", err)
	}
	// Error without text (choice 1): the PBSE table text.
	err = exchange(t, "+2+12+15+9Scheduler+44.vm+0+0+0", "+2+15+15001+0+1",
		func(c *Conn) error { return c.RunJob("4.vm", "") })
	if !errors.As(err, &re) || re.Error() != "Unknown Job Id" {
		t.Errorf("err = %v", err)
	}
	// Resource query answers: never (negative through the unsigned coder).
	var avail int
	err = exchange(t, "+2+12+24+9Scheduler+0+1+9nodes=2:x+0", "+2+1+0+0+9+1210+4294967295+0+0+0",
		func(c *Conn) error { var e error; avail, e = c.ResourceQuery("2:x"); return e })
	if err != nil || avail != -1 {
		t.Errorf("avail %d, %v", avail, err)
	}
	// A closed connection is an error, not a panic.
	a, b := net.Pipe()
	a.Close()
	if _, err := New(b).StatusServer(); err == nil {
		t.Error("no error on closed connection")
	}
}
