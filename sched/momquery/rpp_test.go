package momquery

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"gopbs/momproto"
	"gopbs/rpp"
)

func TestRPPQuery(t *testing.T) {
	momConn, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mom := rpp.NewEndpoint(momConn, nil)
	defer mom.Close()
	got := make(chan string, 2)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := mom.Accept(ctx)
		if err != nil {
			got <- err.Error()
			return
		}
		for {
			msg, err := s.Recv(ctx)
			if err != nil {
				return
			}
			req, err := momproto.DecodeRMRequest(msg)
			if err != nil {
				got <- err.Error()
				return
			}
			got <- momproto.RMCommandName(req.Command) + " " + strings.Join(req.Lines, " ")
			if req.Command == momproto.RM_CMD_REQUEST {
				rep := &momproto.RMReply{Code: momproto.RM_RSP_OK, Answers: []string{"ncpus=4", "arch=linux", "physmem=2gb", "loadave=1.25", "max_load=? 15201", "ideal_load=? 15201"}}
				s.Send(rep.Append(nil))
			}
		}
	}()
	q := NewRPP(momConn.LocalAddr().(*net.UDPAddr).Port)
	q.Listen = func() (net.PacketConn, error) { return net.ListenPacket("udp4", "127.0.0.1:0") }
	defer q.Close()
	answers, err := q.Query(context.Background(), "127.0.0.1", Lines)
	if err != nil {
		t.Fatal(err)
	}
	if first := <-got; first != "RM_CMD_REQUEST ncpus arch physmem loadave max_load ideal_load" {
		t.Errorf("MOM got %q", first)
	}
	select {
	case second := <-got:
		if !strings.HasPrefix(second, "RM_CMD_CLOSE") {
			t.Errorf("then %q", second)
		}
	case <-time.After(5 * time.Second):
		t.Error("no RM_CMD_CLOSE")
	}
	if len(answers) != 6 || answers[3] != "loadave=1.25" {
		t.Errorf("answers %q", answers)
	}
	// A MOM that does not answer times out.
	dead, _ := net.ListenPacket("udp4", "127.0.0.1:0")
	defer dead.Close()
	q2 := NewRPP(dead.LocalAddr().(*net.UDPAddr).Port)
	q2.Timeout = 300 * time.Millisecond
	q2.Listen = q.Listen
	defer q2.Close()
	if _, err := q2.Query(context.Background(), "127.0.0.1", Lines); err == nil {
		t.Error("query to a silent MOM succeeded")
	}
}

func TestRPPPayloadMatchesCapture(t *testing.T) {
	req := &momproto.RMRequest{Version: momproto.RM_PROTOCOL_VER, Command: momproto.RM_CMD_REQUEST, Lines: Lines}
	if got, want := string(req.Append(nil)), string(AppendRequest(nil, Lines)); got != want {
		t.Errorf("RPP payload %q, want %q", got, want)
	}
	cl := &momproto.RMRequest{Version: momproto.RM_PROTOCOL_VER, Command: momproto.RM_CMD_CLOSE}
	if got := string(cl.Append(nil)); got != "+1+1+1" {
		t.Errorf("close %q", got)
	}
}

func TestRPPHostKey(t *testing.T) {
	q := NewRPP(15003)
	var _ HostKeyer = q
	for _, host := range []string{"127.0.0.1", "10.1.2.3"} {
		if got := q.HostKey(host); got != host {
			t.Errorf("HostKey(%q) = %q", host, got)
		}
	}
	if got := q.HostKey("::ffff:10.1.2.3"); got != "10.1.2.3" {
		t.Errorf("HostKey of a mapped address = %q", got)
	}
}
