package pbs

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
)

// fakeConn records what the client writes and serves canned replies.
type fakeConn struct {
	net.Conn
	sent    bytes.Buffer
	replies *strings.Reader
}

func (f *fakeConn) Write(b []byte) (int, error)       { return f.sent.Write(b) }
func (f *fakeConn) Read(b []byte) (int, error)        { return f.replies.Read(b) }
func (f *fakeConn) Close() error                      { return nil }
func (f *fakeConn) SetReadDeadline(_ time.Time) error { return nil }

func newFakeConn(user, replies string) (*Conn, *fakeConn) {
	f := &fakeConn{replies: strings.NewReader(replies)}
	return &Conn{nc: f, r: dis.NewReader(f), user: user, timeout: time.Second}, f
}

const nullReply = "+2+1+0+0+1"

func TestRequestBytes(t *testing.T) {
	tests := []struct {
		name    string
		user    string
		replies string
		call    func(c *Conn) error
		want    string
	}{
		// capture 06: qstat
		{"StatusJob", "alice", nullReply, func(c *Conn) error {
			_, err := c.StatusJob("", nil, "summarize_arrays")
			return err
		}, "+2+12+19+5alice+0+0+12+16summarize_arrays"},
		// capture 10: qmgr create queue
		{"Manager", "root", nullReply, func(c *Conn) error {
			return c.Manager(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, "q2",
				[]Attr{{Name: "queue_type", Value: "execution"}}, "")
		}, "+2+1+9+4root+0+1+2q2+12+212+10queue_type+0+9execution+0+0"},
		// qmgr status list with empty values counted (spec 02 §2.1)
		{"StatusQue qmgr names", "root", nullReply, func(c *Conn) error {
			_, err := c.StatusQueue("batch", []Attr{{Name: "started", ValueSet: true}, {Name: "enabled", ValueSet: true}}, "")
			return err
		}, "+2+12+20+4root+5batch+2+9+7started+0+0+0+9+7enabled+0+0+0+0"},
		// client attrl: a NULL value is not counted in the size
		{"StatusNode names", "alice", nullReply, func(c *Conn) error {
			_, err := c.StatusNode("", []Attr{{Name: "state"}}, "")
			return err
		}, "+2+12+58+5alice+0+1+6+5state+0+0+0+0"},
		// capture 52: resource entry
		{"ModifyJob", "alice", nullReply, func(c *Conn) error {
			return c.ModifyJob("6.vm", []Attr{{Name: "Resource_List", Resource: "walltime", Value: "00:03:00"}}, "")
		}, "+2+12+11+5alice+2+2+46.vm+12+322+13Resource_List+1+8walltime+800:03:00+0+0"},
		{"SelectJobs", "alice", "+2+1+0+0+5+0", func(c *Conn) error {
			_, err := c.SelectJobs([]Attr{{Name: "job_state", Value: "Q", Op: batchreq.EQ}}, "")
			return err
		}, "+2+12+16+5alice+12+12+9job_state+0+1Q+4+0"},
		{"RunJob", "root", nullReply, func(c *Conn) error {
			return c.RunJob("1.vm", "", false, "")
		}, "+2+12+15+4root+41.vm+0+0+0"},
		{"Submit", "alice", "+2+1+0+0+2+41.vm" + nullReply + "+2+1+0+0+3+41.vm+2+1+0+0+4+41.vm", func(c *Conn) error {
			id, err := c.Submit([]Attr{{Name: "Job_Name", Value: "x"}}, []byte("sleep 1\n"), "", "")
			if err == nil && id != "1.vm" {
				t.Errorf("Submit: id %q", id)
			}
			return err
		}, "+2+1+1+5alice+0+0+12+11+8Job_Name+0+1x+0+0" +
			"+2+1+3+5alice+0+0+8+0+8sleep 1\n+0" +
			"+2+1+4+5alice+41.vm+0" +
			"+2+1+5+5alice+41.vm+0"},
		{"DeleteJob", "alice", nullReply, func(c *Conn) error { return c.DeleteJob("1.vm", "deldelay=3") },
			"+2+1+6+5alice+1+2+41.vm+0+12+10deldelay=3"},
		{"HoldJob", "alice", nullReply, func(c *Conn) error { return c.HoldJob("1.vm", "u", "") },
			"+2+1+7+5alice+2+2+41.vm+12+132+10Hold_Types+0+1u+0+0"},
		{"ReleaseJob", "alice", nullReply, func(c *Conn) error { return c.ReleaseJob("1.vm", "s", "array_range=1") },
			"+2+12+13+5alice+2+2+41.vm+12+132+10Hold_Types+0+1s+0+12+13array_range=1"},
		{"AsyModifyJob", "alice", nullReply, func(c *Conn) error {
			return c.AsyModifyJob("1.vm", []Attr{{Name: "Priority", Value: "5"}}, "")
		}, "+2+12+28+5alice+2+2+41.vm+12+11+8Priority+0+15+0+0"},
		{"CheckpointJob", "alice", nullReply, func(c *Conn) error { return c.CheckpointJob("1.vm", "") },
			"+2+12+27+5alice+2+2+41.vm+0+0"},
		{"RerunJob", "root", nullReply, func(c *Conn) error { return c.RerunJob("1.vm", "force") },
			"+2+12+14+4root+41.vm+1+5force"},
		{"LocateJob", "alice", "+2+1+0+0+8+2vm", func(c *Conn) error {
			loc, err := c.LocateJob("1.vm@vm")
			if err == nil && loc != "vm" {
				t.Errorf("LocateJob: location %q", loc)
			}
			return err
		}, "+2+1+8+5alice+71.vm@vm+0"},
		{"MoveJob", "alice", nullReply, func(c *Conn) error { return c.MoveJob("1.vm", "short@vm", "") },
			"+2+12+12+5alice+41.vm+8short@vm+0"},
		{"OrderJob", "alice", nullReply, func(c *Conn) error { return c.OrderJob("1.vm", "2.vm", "") },
			"+2+12+50+5alice+41.vm+42.vm+0"},
		{"AsyrunJob", "root", nullReply, func(c *Conn) error { return c.RunJob("1.vm", "vm", true, "") },
			"+2+12+23+4root+41.vm+2vm+0+0"},
		{"SignalJob", "alice", nullReply, func(c *Conn) error { return c.SignalJob("1.vm", "SIGUSR1", "") },
			"+2+12+18+5alice+41.vm+7SIGUSR1+0"},
		{"MessJob", "alice", nullReply, func(c *Conn) error { return c.MessJob("1.vm", batchreq.MSG_BOTH, "hi", "") },
			"+2+12+10+5alice+41.vm+3+2hi+0"},
		{"Shutdown", "root", nullReply, func(c *Conn) error { return c.Shutdown(batchreq.SHUT_DELAY, "") },
			"+2+12+17+4root+1+0"},
		{"SelStat", "alice", "+2+1+0+0+6+0", func(c *Conn) error {
			_, err := c.SelStat([]Attr{{Name: "job_state", Value: "RS", Op: batchreq.EQ}}, "summarize_arrays")
			return err
		}, "+2+12+51+5alice+12+13+9job_state+0+2RS+4+12+16summarize_arrays"},
		{"StatusServer", "alice", "+2+1+0+0+6+0", func(c *Conn) error {
			_, err := c.StatusServer(nil, "")
			return err
		}, "+2+12+21+5alice+0+0+0"},
		// captures 72-74: the scheduler's resource query
		{"RescQuery", "Scheduler", "+2+1+0+0+9+1+1+0+0+0", func(c *Conn) error {
			avail, alloc, resv, down, err := c.RescQuery([]string{"nodes=1"})
			if err == nil && (len(avail) != 1 || avail[0] != 1 || alloc[0] != 0 || resv[0] != 0 || down[0] != 0) {
				t.Errorf("RescQuery: %v %v %v %v", avail, alloc, resv, down)
			}
			return err
		}, "+2+12+24+9Scheduler+0+1+7nodes=1+0"},
		{"Close", "alice", "", func(c *Conn) error { return c.Close() }, "+2+12+59+5alice"},
	}
	for _, tt := range tests {
		c, f := newFakeConn(tt.user, tt.replies)
		if err := tt.call(c); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
		if got := f.sent.String(); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestReplies(t *testing.T) {
	c, _ := newFakeConn("alice", "+2+1+0+0+6+1+3+2vm+22+11+5state+0+4free+02+222+13Resource_List+1+3mem+31gb+0")
	st, err := c.StatusNode("", nil, "")
	if err != nil || len(st) != 1 || st[0].Name != "vm" || st[0].ObjType != batchreq.MGR_OBJ_NODE {
		t.Fatalf("StatusNode = %+v, %v", st, err)
	}
	if v, ok := st[0].Get("state", ""); !ok || v != "free" {
		t.Errorf("state = %q, %v", v, ok)
	}
	if v, ok := st[0].Get("Resource_List", "mem"); !ok || v != "1gb" {
		t.Errorf("Resource_List.mem = %q, %v", v, ok)
	}

	tests := []struct {
		name  string
		reply string
		call  func(c *Conn) error
		code  int
		text  string
	}{
		{"error text", "+2+15+15001+0+72+14Unknown Job Id", func(c *Conn) error {
			_, err := c.StatusJob("9.vm", nil, "")
			return err
		}, batchreq.PBSE_UNKJOBID, "Unknown Job Id"},
		{"error without text", "+2+15+15001+0+1", func(c *Conn) error { return c.DeleteJob("9.vm", "") },
			batchreq.PBSE_UNKJOBID, ""},
		// SelectJobs accepts only Select and Text (spec 02 §4)
		{"choice not accepted", "+2+15+15001+0+1", func(c *Conn) error {
			_, err := c.SelectJobs(nil, "")
			return err
		}, batchreq.PBSE_PROTOCOL, ""},
		{"bad protocol", "+3+1+0+0+1", func(c *Conn) error { return c.DeleteJob("9.vm", "") },
			batchreq.PBSE_PROTOCOL, ""},
		{"closed", "", func(c *Conn) error { return c.DeleteJob("9.vm", "") }, batchreq.PBSE_PROTOCOL, ""},
	}
	for _, tt := range tests {
		c, _ := newFakeConn("alice", tt.reply)
		err := tt.call(c)
		if Errno(err) != tt.code || ServerText(err) != tt.text {
			t.Errorf("%s: code %d text %q, want %d %q", tt.name, Errno(err), ServerText(err), tt.code, tt.text)
		}
	}
}

func TestSubmitChunks(t *testing.T) {
	c, f := newFakeConn("alice", "+2+1+0+0+2+41.vm"+nullReply+nullReply+nullReply+nullReply)
	script := strings.Repeat("a", batchreq.ScriptChunkSize) + "b"
	if _, err := c.Submit(nil, []byte(script), "", ""); err != nil {
		t.Fatal(err)
	}
	sent := f.sent.String()
	first := "+2+1+3+5alice+0+0" + string(dis.AppendUint(nil, batchreq.ScriptChunkSize)) + "+0" +
		string(dis.AppendString(nil, script[:batchreq.ScriptChunkSize])) + "+0"
	second := "+2+1+3+5alice+1+0+1+0+1b+0"
	if !strings.Contains(sent, first+second) {
		t.Errorf("script chunks not sent as %d + 1 bytes", batchreq.ScriptChunkSize)
	}
}
