package iff

import (
	"context"
	"net"
	"os"
	"testing"
	"time"
)

func TestDialReservedBindsAReservedPort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("binding a reserved port needs root")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d := ReservedDialer{Spread: true}
	seen := map[int]bool{}
	for range 3 {
		c, err := d.Dial(ctx, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		port := c.LocalAddr().(*net.TCPAddr).Port
		c.Close()
		if port < FirstReservedPort || port > LastReservedPort {
			t.Fatalf("local port %d is not reserved", port)
		}
		seen[port] = true
	}
	if len(seen) != 3 {
		t.Fatalf("Spread dials reused ports: %v", seen)
	}
	c, err := DialReserved(ctx, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if p := c.LocalAddr().(*net.TCPAddr).Port; p < FirstReservedPort || p > LastReservedPort {
		t.Fatalf("DialReserved used port %d", p)
	}
	c.Close()
}

func TestDialReservedReportsRefusal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("binding a reserved port needs root")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := DialReserved(context.Background(), addr); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}
