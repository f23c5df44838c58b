package iff

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

var local = netip.MustParseAddr("127.0.0.1")

func code(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestPrivilegedConnectionsAreTrusted(t *testing.T) {
	tab := NewTable()
	c := tab.Add(netip.AddrPortFrom(local, 1023))
	if !c.Privileged() {
		t.Fatal("port 1023 not privileged")
	}
	if err := c.Check("anyone", "anyhost", time.Now(), DefaultLifetime); err != nil {
		t.Fatal(err)
	}
	if tab.Add(netip.AddrPortFrom(local, 1024)).Privileged() {
		t.Fatal("port 1024 privileged")
	}
}

func TestAddPrivileged(t *testing.T) {
	tab := NewTable()
	remote := netip.AddrPortFrom(local, 15004)
	c := tab.AddPrivileged(remote)
	if !c.Privileged() || c.Remote() != remote {
		t.Fatalf("privileged %v, remote %v", c.Privileged(), c.Remote())
	}
	if err := c.Check("anyone", "anyhost", time.Now(), DefaultLifetime); err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 1 {
		t.Fatalf("len %d", tab.Len())
	}
	// A helper naming the port leaves the privileged connection as it is.
	if err := tab.Authenticate(local, 15004, "alice", "vm", time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.Credential(); ok {
		t.Fatal("privileged connection bound to a user")
	}
	tab.Remove(c)
	if tab.Len() != 0 {
		t.Fatalf("len %d after Remove", tab.Len())
	}
}

func TestAuthenticateAndCheck(t *testing.T) {
	now := time.Unix(1795310000, 0)
	tab := NewTable()
	c := tab.Add(netip.AddrPortFrom(local, 40000))
	other := tab.Add(netip.AddrPortFrom(netip.MustParseAddr("10.0.0.5"), 40001))

	if err := c.Check("alice", "vm", now, DefaultLifetime); code(err) != PBSE_BADCRED || err.(*Error).Msg != "" {
		t.Fatalf("unauthenticated: %v", err)
	}
	// Port of a connection from another address: not found.
	if err := tab.Authenticate(local, 40001, "alice", "vm", now, 0); err != ErrNotFound {
		t.Fatalf("foreign address: %v", err)
	}
	if _, _, ok := other.Credential(); ok {
		t.Fatal("foreign connection authenticated")
	}
	if err := tab.Authenticate(local, 40000, "alice", "vm", now, 0); err != nil {
		t.Fatal(err)
	}
	// A second AuthenticateUser naming the same port changes nothing.
	if err := tab.Authenticate(local, 40000, "bob", "vm", now, 0); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		user, host string
		at         time.Time
		lifetime   time.Duration
		code       int
		msg        string
	}{
		{"alice", "vm", now, DefaultLifetime, 0, ""},
		{"bob", "vm", now, DefaultLifetime, PBSE_BADCRED, "Users do not match"},
		{"alice", "other", now, DefaultLifetime, PBSE_BADCRED, "Hosts do not match"},
		{"alice", "vm", now.Add(3601 * time.Second), DefaultLifetime, PBSE_EXPIRED, ""},
		{"alice", "vm", now.Add(3601 * time.Second), -1, 0, ""},
		{"alice", "vm", now.Add(-301 * time.Second), DefaultLifetime, PBSE_EXPIRED, ""},
		{"alice", "vm", now.Add(-299 * time.Second), DefaultLifetime, 0, ""},
	}
	for i, tt := range tests {
		err := c.Check(tt.user, tt.host, tt.at, tt.lifetime)
		if code(err) != tt.code {
			t.Errorf("%d: code %d (%v), want %d", i, code(err), err, tt.code)
			continue
		}
		if err != nil && err.(*Error).Msg != tt.msg {
			t.Errorf("%d: msg %q want %q", i, err.(*Error).Msg, tt.msg)
		}
	}
	if u, h, ok := c.Credential(); u != "alice" || h != "vm" || !ok {
		t.Fatalf("credential %q %q %v", u, h, ok)
	}
}

func TestAuthenticateWaitsForLateConnection(t *testing.T) {
	tab := NewTable()
	done := make(chan error, 1)
	go func() { done <- tab.Authenticate(local, 41000, "alice", "vm", time.Now(), 5*time.Second) }()
	time.Sleep(20 * time.Millisecond)
	c := tab.Add(netip.AddrPortFrom(local, 41000))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.Credential(); !ok {
		t.Fatal("late connection not authenticated")
	}
}

func TestRemove(t *testing.T) {
	tab := NewTable()
	a := tab.Add(netip.AddrPortFrom(local, 42000))
	b := tab.Add(netip.AddrPortFrom(local, 42000))
	tab.Remove(a)
	if tab.Len() != 1 {
		t.Fatalf("len %d", tab.Len())
	}
	if err := tab.Authenticate(local, 42000, "alice", "vm", time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := b.Credential(); !ok {
		t.Fatal("remaining connection not authenticated")
	}
	tab.Remove(b)
	if tab.Len() != 0 {
		t.Fatal("not empty")
	}
	if err := tab.Authenticate(local, 42000, "alice", "vm", time.Now(), 0); err != ErrNotFound {
		t.Fatal(err)
	}
}
