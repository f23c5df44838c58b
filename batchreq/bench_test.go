package batchreq

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"gopbs/dis"
)

// variableList is a Variable_List value of typical size.
var variableList = "PBS_O_QUEUE=batch,PBS_O_HOME=/home/alice,PBS_O_LOGNAME=alice," +
	"PBS_O_PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games," +
	"PBS_O_MAIL=/var/mail/alice,PBS_O_SHELL=/bin/bash,PBS_O_LANG=C.UTF-8," +
	"PBS_O_WORKDIR=/home/alice,PBS_O_HOST=vm,PBS_O_SERVER=vm"

// statusJobReply builds a StatusJob reply for n jobs carrying the
// attributes of a "qstat -f" of a running job.
func statusJobReply(n int) *Reply {
	p := &Reply{Choice: BATCH_REPLY_CHOICE_Status, Status: make([]StatusObject, n)}
	for i := range p.Status {
		id := fmt.Sprintf("%d.vm", i+1)
		p.Status[i] = StatusObject{ObjType: MGR_OBJ_JOB, Name: id, Attrs: AttrList{
			NewAttr("Job_Name", "sleep20.sh"),
			NewAttr("Job_Owner", "alice@vm"),
			NewResourceAttr("resources_used", "cput", "00:00:00"),
			NewResourceAttr("resources_used", "mem", "3204kb"),
			NewResourceAttr("resources_used", "vmem", "28380kb"),
			NewResourceAttr("resources_used", "walltime", "00:00:12"),
			NewAttr("job_state", "R"),
			NewAttr("queue", "batch"),
			NewAttr("server", "vm"),
			NewAttr("Checkpoint", "u"),
			NewAttr("ctime", "1795310482"),
			NewAttr("Error_Path", "vm:/home/alice/sleep20.sh.e"+id),
			NewAttr("exec_host", "vm/0"),
			NewAttr("Hold_Types", "n"),
			NewAttr("Join_Path", "n"),
			NewAttr("Keep_Files", "n"),
			NewAttr("Mail_Points", "a"),
			NewAttr("mtime", "1795310490"),
			NewAttr("Output_Path", "vm:/home/alice/sleep20.sh.o"+id),
			NewAttr("Priority", "0"),
			NewAttr("qtime", "1795310482"),
			NewAttr("Rerunable", "True"),
			NewResourceAttr("Resource_List", "neednodes", "1"),
			NewResourceAttr("Resource_List", "nodes", "1"),
			NewResourceAttr("Resource_List", "walltime", "01:00:00"),
			NewAttr("session_id", "16978"),
			NewAttr("Variable_List", variableList),
			NewAttr("etime", "1795310482"),
			NewAttr("submit_args", "sleep20.sh"),
			NewAttr("start_time", "1795310490"),
			NewAttr("start_count", "1"),
			NewAttr("fault_tolerant", "False"),
			NewAttr("submit_host", "vm"),
			NewAttr("init_work_dir", "/home/alice"),
		}}
	}
	return p
}

// queueJobRequest is the QueueJob qsub sends for a plain script.
func queueJobRequest() *Request {
	q := NewRequest(PBS_BATCH_QueueJob, "alice", &QueueJob{Attrs: AttrList{
		NewAttr("submit_args", "sleep20.sh"),
		NewAttr("Job_Name", "sleep20.sh"),
		NewAttr("Checkpoint", "u"),
		NewAttr("Hold_Types", "n"),
		NewAttr("Join_Path", "n"),
		NewAttr("Keep_Files", "n"),
		NewAttr("Mail_Points", "a"),
		NewAttr("Priority", "0"),
		NewAttr("Rerunable", "TRUE"),
		NewAttr("fault_tolerant", "FALSE"),
		NewAttr("init_work_dir", "/home/alice"),
		NewAttr("Variable_List", variableList),
	}})
	return q
}

func TestBenchmarkMessagesRoundTrip(t *testing.T) {
	wire := statusJobReply(3).Append(nil)
	p, err := ReadReply(dis.NewReader(bytes.NewReader(wire)))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Status) != 3 || len(p.Status[2].Attrs) != 34 || !bytes.Equal(p.Append(nil), wire) {
		t.Errorf("status reply did not round-trip")
	}
	q := queueJobRequest().Append(nil)
	if !strings.HasPrefix(string(q), "+2+1+1+5alice+0+02+12") {
		t.Errorf("QueueJob = %.40q", q)
	}
}

func BenchmarkDecodeStatusJobReply1000(b *testing.B) {
	wire := statusJobReply(1000).Append(nil)
	br := bytes.NewReader(wire)
	r := dis.NewReader(br)
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	for b.Loop() {
		br.Reset(wire)
		r.Reset(br)
		p, err := ReadReply(r)
		if err != nil || len(p.Status) != 1000 {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeQueueJob(b *testing.B) {
	q := queueJobRequest()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = q.Append(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkEncodeQueueJobWriter(b *testing.B) {
	q := queueJobRequest()
	w := dis.NewWriter(discard{})
	b.ReportAllocs()
	for b.Loop() {
		q.Encode(w)
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
