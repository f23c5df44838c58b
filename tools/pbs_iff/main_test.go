package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"strconv"
	"testing"

	"gopbs/dis"
	"gopbs/pbs"
)

// fakeServer accepts one connection, records what pbs_iff sent and answers
// the AuthenUser request with reply.
func fakeServer(t *testing.T, reply string) (port int, got chan []byte) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got = make(chan []byte, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer nc.Close()
		buf := make([]byte, 256)
		n, _ := nc.Read(buf)
		nc.Write([]byte(reply))
		rest, _ := io.ReadAll(nc)
		got <- append(buf[:n], rest...)
	}()
	return ln.Addr().(*net.TCPAddr).Port, got
}

func TestForms(t *testing.T) {
	user, err := pbs.CurrentUser()
	if err != nil {
		t.Skip(err)
	}
	client, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	conn, err := net.Dial("tcp4", client.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	f, err := conn.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	localPort := conn.LocalAddr().(*net.TCPAddr).Port

	tests := []struct {
		name    string
		operand string
		port    int
	}{
		{"descriptor", strconv.Itoa(int(f.Fd())), localPort},
		{"port number", "40000", 40000},
	}
	for _, tt := range tests {
		port, got := fakeServer(t, "+2+1+0+0+1")
		var out bytes.Buffer
		code := run([]string{"pbs_iff", "127.0.0.1", strconv.Itoa(port), tt.operand}, &out, false)
		if code != 0 || out.String() != "\x00\x00\x00\x00" {
			t.Errorf("%s: exit %d, stdout %q", tt.name, code, out.String())
		}
		want := "+2+12+49" + string(dis.AppendString(nil, user)) + string(dis.AppendUint(nil, uint64(tt.port))) + "+0" +
			"+2+12+592+10PBS_Server"
		if g := string(<-got); g != want {
			t.Errorf("%s: server got %q, want %q", tt.name, g, want)
		}
	}
}

func TestRefusal(t *testing.T) {
	port, _ := fakeServer(t, "+2+15+15021+0+72+18Invalid credential")
	var out bytes.Buffer
	if code := run([]string{"pbs_iff", "127.0.0.1", strconv.Itoa(port), "40000"}, &out, false); code != 1 || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q", code, out.String())
	}
}

func TestUsageAndErrors(t *testing.T) {
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	tests := []struct {
		args []string
		tty  bool
		want int
	}{
		{[]string{"pbs_iff"}, false, 1},
		{[]string{"pbs_iff", "vm", "15001"}, false, 1},
		{[]string{"pbs_iff", "127.0.0.1", "15001", "99"}, false, 3},
		{[]string{"pbs_iff", "127.0.0.1", "0", "40000"}, false, 1},
		{[]string{"pbs_iff", "127.0.0.1", "15001", "40000"}, true, 1},
	}
	for _, tt := range tests {
		if got := run(tt.args, io.Discard, tt.tty); got != tt.want {
			t.Errorf("%q: exit %d, want %d", tt.args, got, tt.want)
		}
	}
}
