package compattests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
)

// A replayed job must be running when the replay sends the server's first
// poll if the captured poll found it running: the MOM answers a poll with
// an object only for a running job and sends session_id once, in the
// first reply that has the job or else in the obit (spec 10 §7, §8.2;
// capture 106 shows the other answer). Some captured jobs end within
// milliseconds of their launch (capture 94: 15 ms after the poll; 86's
// second job: 8 ms), so on a busy machine a replayed job could end before
// the poll, and its poll reply and obit would differ from the capture
// although the MOM did right. The replay therefore holds each such job:
// its script gets a first command that opens a named pipe for reading,
// which blocks until the test opens the pipe for writing, after the poll
// has been answered. The requests the MOM receives differ from the
// capture only in the script's text; every reply and MOM request is
// compared as before.

// jobHolds are the named pipes that hold a capture's polled jobs.
type jobHolds struct {
	t      *testing.T
	dir    string            // where the pipes are, on this host
	jobDir string            // the same directory as the job sees it
	polled map[string]bool   // the jobs the capture polled while they ran
	pipes  map[string]string // job id -> pipe (host path), once created
}

// holdPolledJobs returns the holds for the jobs of c whose first poll in
// the capture was answered with the job (it ran). The pipes are made in
// dir, which the jobs see as jobDir; a cleanup releases any job still
// held and removes the pipes.
func holdPolledJobs(t *testing.T, c *capture.Capture, dir, jobDir string) *jobHolds {
	h := &jobHolds{t: t, dir: dir, jobDir: jobDir, polled: map[string]bool{}, pipes: map[string]string{}}
	seen := map[string]bool{}
	for _, conn := range c.Conns {
		id, ok := serverPoll(conn)
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		rep, err := batchreq.ReadReply(dis.NewReader(bytes.NewReader(conn.Stream(false))))
		if err != nil {
			t.Fatalf("captured reply to the poll of %s: %v", id, err)
		}
		if slices.ContainsFunc(rep.Status, func(o batchreq.StatusObject) bool { return o.Name == id }) {
			h.polled[id] = true
		}
	}
	t.Cleanup(func() {
		for id := range h.pipes {
			h.release(id, 0)
		}
	})
	return h
}

// serverPoll reports whether conn is a server's StatusJob to the MOM's
// batch port, and for which job.
func serverPoll(conn *capture.Conn) (string, bool) {
	if conn.Server.Port() != batchreq.PBS_MOM_SERVICE_PORT {
		return "", false
	}
	req, err := batchreq.ReadRequest(dis.NewReader(bytes.NewReader(conn.Stream(true))))
	if err != nil || req.Type != batchreq.PBS_BATCH_StatusJob || req.User != "PBS_Server" {
		return "", false
	}
	id := req.Body.(*batchreq.StatusReq).ID
	return id, id != ""
}

// rewrite puts the hold into the script of a polled job (the JobScript
// request's first chunk): it makes the job's pipe and inserts, after the
// "#!" line, a command that opens it. It reports whether it changed req.
func (h *jobHolds) rewrite(req *batchreq.Request) bool {
	b, ok := req.Body.(*batchreq.JobFile)
	if !ok || req.Type != batchreq.PBS_BATCH_jobscript || b.Seq != 0 || !h.polled[b.JobID] {
		return false
	}
	name := ".hold-" + b.JobID
	pipe := filepath.Join(h.dir, name)
	os.Remove(pipe) // left by a test that was killed
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		h.t.Fatalf("holding job %s: %v", b.JobID, err)
	}
	h.pipes[b.JobID] = pipe
	// Any job owner may open it.
	if err := os.Chmod(pipe, 0o666); err != nil {
		h.t.Fatal(err)
	}
	hold := []byte(": < " + path.Join(h.jobDir, name) + "\n")
	at := 0
	if bytes.HasPrefix(b.Data, []byte("#!")) {
		if i := bytes.IndexByte(b.Data, '\n'); i >= 0 {
			at = i + 1
		}
	}
	b.Data = slices.Concat(b.Data[:at], hold, b.Data[at:])
	return true
}

// played releases the job that conn polled, if it is held: the poll has
// been answered.
func (h *jobHolds) played(conn *capture.Conn) error {
	if id, ok := serverPoll(conn); ok {
		return h.release(id, 20*time.Second)
	}
	return nil
}

// release lets a held job go on: it waits (at most limit) until the job
// has opened its pipe for reading, opens it for writing, which completes
// the job's open, and removes the pipe.
func (h *jobHolds) release(id string, limit time.Duration) error {
	pipe, ok := h.pipes[id]
	if !ok {
		return nil
	}
	delete(h.pipes, id)
	defer os.Remove(pipe)
	deadline := time.Now().Add(limit)
	for {
		// Without O_NONBLOCK the open would wait for a reader for ever;
		// with it, it fails with ENXIO while there is none.
		fd, err := syscall.Open(pipe, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			return syscall.Close(fd)
		}
		if !errors.Is(err, syscall.ENXIO) {
			return fmt.Errorf("releasing job %s: %w", id, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("job %s did not reach its hold (%s) within %v", id, strings.TrimPrefix(pipe, h.dir+"/"), limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
