package pbs

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// testServer is a fake pbs_server: handle answers each request, and the
// requests are recorded as "<type> <object>", connection by connection in
// accept order (a client's Disconnect may be read after its next
// connection has begun).
type testServer struct {
	ln     net.Listener
	handle func(req *batchreq.Request) *batchreq.Reply
	mu     sync.Mutex
	got    [][]string
	wg     sync.WaitGroup
}

func newTestServer(t *testing.T, handle func(*batchreq.Request) *batchreq.Reply) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{ln: ln, handle: handle}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.got = append(s.got, nil)
			idx := len(s.got) - 1
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer nc.Close()
				r := dis.NewReader(nc)
				for {
					req, err := batchreq.ReadAnyRequest(r)
					if err != nil {
						return
					}
					s.mu.Lock()
					s.got[idx] = append(s.got[idx], strings.TrimSpace(batchreq.RequestName(req.Type)+" "+req.ObjectID()))
					s.mu.Unlock()
					if req.Type == batchreq.PBS_BATCH_Disconnect {
						return
					}
					if _, err := nc.Write(s.handle(req).Append(nil)); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *testServer) port() string { return strconv.Itoa(s.ln.Addr().(*net.TCPAddr).Port) }

// requests waits for the conversations to end and returns the record.
func (s *testServer) requests() []string {
	s.ln.Close()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []string
	for _, conv := range s.got {
		all = append(all, conv...)
	}
	return all
}

// clientEnv points the library at a stand-in pbs_iff and maps the server
// names "srva" and "srvb" to the loopback address.
func clientEnv(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IffName), []byte("#!/bin/sh\nprintf '\\000\\000\\000\\000'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	aliases := filepath.Join(dir, "aliases")
	if err := os.WriteFile(aliases, []byte("srva 127.0.0.1\nsrvb 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PBSBINDIR", dir)
	t.Setenv("HOSTALIASES", aliases)
	t.Setenv("PBS_HOME", dir)
	t.Setenv("PBS_SERVER", "")
}

var (
	unknownJob = batchreq.TextReply(batchreq.PBSE_UNKJOBID, "Unknown Job Id")
	null       = batchreq.NullReply()
)

func TestWithLocate(t *testing.T) {
	tests := []struct {
		name       string
		id         string
		a, b       func(*batchreq.Request) *batchreq.Reply
		wantErr    int
		wantA      []string
		wantB      []string
		locatedToB bool
	}{
		{name: "located and retried", id: "12",
			a: func(req *batchreq.Request) *batchreq.Reply {
				if req.Type == batchreq.PBS_BATCH_LocateJob {
					return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Locate, Location: "srvb:{B}"}
				}
				return unknownJob
			},
			b:     func(*batchreq.Request) *batchreq.Reply { return null },
			wantA: []string{"DeleteJob 12.srva", "Disconnect", "LocateJob 12.srva", "Disconnect"},
			wantB: []string{"DeleteJob 12.srva", "Disconnect"}},
		{name: "not located", id: "12.srva",
			a:       func(*batchreq.Request) *batchreq.Reply { return unknownJob },
			wantErr: batchreq.PBSE_UNKJOBID,
			wantA:   []string{"DeleteJob 12.srva", "Disconnect", "LocateJob 12.srva@srva", "Disconnect"}},
		{name: "other errors are not located", id: "12",
			a: func(*batchreq.Request) *batchreq.Reply {
				return batchreq.TextReply(batchreq.PBSE_PERM, "Unauthorized Request ")
			},
			wantErr: batchreq.PBSE_PERM,
			wantA:   []string{"DeleteJob 12.srva", "Disconnect"}},
		{name: "current server, located at the parent", id: "12.srva@srvb:{B}",
			a: func(*batchreq.Request) *batchreq.Reply {
				return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Locate, Location: "srva:{A}"}
			},
			b:     func(*batchreq.Request) *batchreq.Reply { return unknownJob },
			wantA: []string{"LocateJob 12.srva@srva", "Disconnect", "DeleteJob 12.srva", "Disconnect"},
			wantB: []string{"DeleteJob 12.srva", "Disconnect"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clientEnv(t)
			var a, b *testServer
			fix := func(rp *batchreq.Reply) *batchreq.Reply {
				c := *rp
				c.Location = strings.NewReplacer("{A}", a.port(), "{B}", b.port()).Replace(c.Location)
				return &c
			}
			a = newTestServer(t, func(req *batchreq.Request) *batchreq.Reply { return fix(tt.a(req)) })
			handleB := tt.b
			if handleB == nil {
				handleB = func(*batchreq.Request) *batchreq.Reply { return unknownJob }
			}
			b = newTestServer(t, func(req *batchreq.Request) *batchreq.Reply { return fix(handleB(req)) })
			t.Setenv("PBS_DEFAULT", "srva:"+a.port())
			j, err := ParseJobID(strings.NewReplacer("{A}", a.port(), "{B}", b.port()).Replace(tt.id))
			if err != nil {
				t.Fatal(err)
			}
			err = WithLocate(j, nil, func(c *Conn, id string) error { return c.DeleteJob(id, "") })
			if Errno(err) != tt.wantErr {
				t.Errorf("error %v (%d), want %d", err, Errno(err), tt.wantErr)
			}
			if got := a.requests(); strings.Join(got, "|") != strings.Join(tt.wantA, "|") {
				t.Errorf("server A got %q, want %q", got, tt.wantA)
			}
			if got := b.requests(); strings.Join(got, "|") != strings.Join(tt.wantB, "|") {
				t.Errorf("server B got %q, want %q", got, tt.wantB)
			}
		})
	}
}

func TestConnectServerSelection(t *testing.T) {
	clientEnv(t)
	srv := newTestServer(t, func(*batchreq.Request) *batchreq.Reply { return null })
	// Nothing listens on port 1 (tcpmux): connections are refused.
	const refused = "1"

	tests := []struct {
		name, server, pbsDefault, pbsServer, serverName string
		want                                            string // server connected to, "" for a refusal
	}{
		{name: "explicit host:port", server: "srva:{S}", want: "srva:{S}"},
		{name: "PBS_DEFAULT", pbsDefault: "srva:{S}", pbsServer: "srvb:{R}", serverName: "srvb:{R}", want: "srva:{S}"},
		{name: "PBS_SERVER", pbsServer: "srvb:{S}", serverName: "srva:{R}", want: "srvb:{S}"},
		{name: "server_name file", serverName: "srva:{S}\n", want: "srva:{S}"},
		{name: "list falls back to the next server", pbsDefault: "srva:{R},srvb:{S}", want: "srvb:{S}"},
		{name: "refused", server: "srva:{R}"},
		{name: "named server refused falls back to the default list", server: "srva:{R}", pbsDefault: "srvb:{S}", want: "srvb:{S}"},
		{name: "named server comes before the default list", server: "srva:{S}", pbsDefault: "srvb:{S}", want: "srva:{S}"},
		{name: "named server and default list refused", server: "srva:{R}", pbsDefault: "srvb:{R}"},
	}
	expand := strings.NewReplacer("{S}", srv.port(), "{R}", refused).Replace
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("PBS_HOME", home)
			t.Setenv("PBS_DEFAULT", expand(tt.pbsDefault))
			t.Setenv("PBS_SERVER", expand(tt.pbsServer))
			if tt.serverName != "" {
				if err := os.WriteFile(filepath.Join(home, "server_name"), []byte(expand(tt.serverName)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c, err := Connect(expand(tt.server))
			if tt.want == "" {
				if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Fatalf("Connect: %v, want ECONNREFUSED", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer c.Close()
			if c.Server() != expand(tt.want) {
				t.Errorf("connected to %q, want %q", c.Server(), expand(tt.want))
			}
			if err := c.Shutdown(batchreq.SHUT_QUICK, ""); err != nil {
				t.Errorf("request on the connection: %v", err)
			}
		})
	}
}

func TestConnectErrors(t *testing.T) {
	clientEnv(t)
	t.Run("no server", func(t *testing.T) {
		t.Setenv("PBS_DEFAULT", "")
		t.Setenv("PBS_HOME", t.TempDir())
		if _, err := Connect(""); Errno(err) != batchreq.PBSE_NOSERVER {
			t.Errorf("Connect: %v, want PBSE_NOSERVER", err)
		}
	})
	t.Run("no pbs_iff", func(t *testing.T) {
		srv := newTestServer(t, func(*batchreq.Request) *batchreq.Reply { return null })
		empty := t.TempDir()
		t.Setenv("PBSBINDIR", empty)
		t.Setenv("PATH", empty)
		saved := SbinDir
		SbinDir = empty
		defer func() { SbinDir = saved }()
		if _, err := Connect("srva:" + srv.port()); Errno(err) != batchreq.PBSE_IFF_NOT_FOUND {
			t.Errorf("Connect: %v, want PBSE_IFF_NOT_FOUND", err)
		}
	})
	t.Run("pbs_iff refuses", func(t *testing.T) {
		srv := newTestServer(t, func(*batchreq.Request) *batchreq.Reply { return null })
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, IffName), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PBSBINDIR", dir)
		if _, err := Connect("srva:" + srv.port()); Errno(err) != batchreq.PBSE_PERM {
			t.Errorf("Connect: %v, want PBSE_PERM", err)
		}
	})
}

func TestReplyTimeout(t *testing.T) {
	clientEnv(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		// Accept and say nothing.
		var held []net.Conn
		for {
			nc, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, nc)
		}
	}()
	t.Setenv("PBSAPITIMEOUT", "1")
	c, err := Connect("srva:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.StatusServer(nil, "")
	if Errno(err) != batchreq.PBSE_PROTOCOL {
		t.Errorf("StatusServer: %v, want PBSE_PROTOCOL", err)
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 10*time.Second {
		t.Errorf("gave up after %v, want about 1 s ($PBSAPITIMEOUT)", d)
	}
}
