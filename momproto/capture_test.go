package momproto

import (
	"bytes"
	"path/filepath"
	"testing"

	"gopbs/internal/capture"
	"gopbs/internal/capture/capturetest"
	"gopbs/rpp"
)

// TestCapturedMessages decodes every IS, RM and IM message carried by RPP
// and every TM message on TCP port 15003 in the captures, and checks that
// encoding each decoded message reproduces the captured bytes.
func TestCapturedMessages(t *testing.T) {
	files := capturetest.PcapFiles(t)
	counts := map[string]int{}
	for _, f := range files {
		name := filepath.Base(f)
		c, err := capture.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var asm rpp.Assembler
		var im IMTracker
		for _, d := range c.Datagrams {
			p, err := rpp.Parse(d.Payload)
			if err != nil {
				t.Fatalf("%s frame %d: %v", name, d.Frame, err)
			}
			res := asm.Add(d.Src, d.Dst, p)
			if res.Message == nil {
				continue
			}
			body := res.Message.Data
			proto, err := Protocol(body)
			if err != nil {
				t.Errorf("%s frame %d: %v", name, d.Frame, err)
				continue
			}
			var got []byte
			var kind string
			switch proto {
			case IS_PROTOCOL:
				var msg *ISMessage
				if msg, err = DecodeIS(body); err == nil {
					got, kind = msg.Append(nil), ISCommandName(msg.Command)
				}
			case RM_PROTOCOL:
				var req *RMRequest
				if req, err = DecodeRMRequest(body); err == nil {
					got, kind = req.Append(nil), RMCommandName(req.Command)
				}
			case IM_PROTOCOL:
				var msg *IMMessage
				if msg, err = im.Decode(d.Src, d.Dst, body); err == nil {
					got, kind = msg.Append(nil), IMCommandName(msg.Command)
					if msg.Command == IM_ALL_OKAY {
						if msg.ReplyTo < 0 {
							t.Errorf("%s frame %d: reply without its request", name, d.Frame)
						}
						kind += " to " + IMCommandName(msg.ReplyTo)
					}
				}
			default:
				var rep *RMReply
				if rep, err = DecodeRMReply(body); err == nil {
					got, kind = rep.Append(nil), RMCodeName(rep.Code)
				}
			}
			if err != nil {
				t.Errorf("%s frame %d: %v in %q", name, d.Frame, err, body)
				continue
			}
			counts[kind]++
			if !bytes.Equal(got, body) {
				t.Errorf("%s frame %d: %s re-encoded as\n%q\ncaptured\n%q", name, d.Frame, kind, got, body)
			}
		}
		for _, conn := range c.Conns {
			if conn.Server.Port() != 15003 {
				continue
			}
			var tm TMTracker
			reqs, err := decodeAll(conn.Stream(true), tm.DecodeRequest)
			if err != nil {
				t.Errorf("%s %v: TM request: %v", name, conn.Client, err)
			}
			for _, req := range reqs {
				counts[TMCommandName(req.Command)]++
			}
			reps, err := decodeAll(conn.Stream(false), tm.DecodeReply)
			if err != nil {
				t.Errorf("%s %v: TM reply: %v", name, conn.Client, err)
			}
			for _, rep := range reps {
				counts["reply to "+TMCommandName(rep.ReplyTo)]++
			}
		}
	}
	t.Logf("decoded: %v", counts)
	for _, k := range []string{"IS_HELLO", "IS_STATUS", "IS_CLUSTER_ADDRS", "RM_CMD_REQUEST", "RM_CMD_CLOSE",
		"RM_RSP_OK", "IM_JOIN_JOB", "IM_SPAWN_TASK", "IM_OBIT_TASK", "IM_KILL_JOB", "IM_ALL_OKAY to IM_KILL_JOB",
		"TM_INIT", "TM_SPAWN", "TM_OBIT", "reply to TM_INIT"} {
		if counts[k] == 0 {
			t.Errorf("no %s decoded", k)
		}
	}
}
