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

func TestReservedPortOrder(t *testing.T) {
	cases := []struct {
		start, i uint32
		port     int
	}{
		{0, 0, 1023}, {0, 1, 1022}, {0, 511, 512}, {0, 512, 1023},
		{1, 0, 1022}, {5, 506, 512}, {5, 507, 1023},
	}
	for _, c := range cases {
		if got := reservedPort(c.start, c.i); got != c.port {
			t.Errorf("reservedPort(%d, %d) = %d, want %d", c.start, c.i, got, c.port)
		}
	}
}
