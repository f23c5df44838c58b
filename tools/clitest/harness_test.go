package clitest

import (
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/e2e"
)

// commands are the client programs the tests build.
var commands = []string{
	"qsub", "qstat", "qdel", "qhold", "qrls", "qalter", "qmove", "qorder",
	"qrun", "qrerun", "qsig", "qmsg", "qchkpt", "qselect", "qenable", "qdisable",
	"qstart", "qstop", "qterm", "qmgr", "pbsnodes", "momctl", "tracejob",
}

// fakeIff stands in for pbs_iff: it vouches for every connection by
// writing the credential 0 (four zero bytes) and sends nothing to the
// server, so the tests need no setuid helper.
const fakeIff = "#!/bin/sh\nprintf '\\000\\000\\000\\000'\n"

func TestMain(m *testing.M) {
	code := m.Run()
	e2e.RemoveBuilds()
	os.Exit(code)
}

// commandsDir returns the directory of the client commands, built once
// per test binary by e2e.Build (so their compiled-in sbin directory is
// that directory, not an installation's).
func commandsDir(t *testing.T) string {
	t.Helper()
	return e2e.Build(t, commands...).Dir
}

// fakeIffDir returns a new directory holding the stand-in pbs_iff, for
// $PBSBINDIR.
func fakeIffDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pbs_iff"), []byte(fakeIff), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// loginName is the user name the commands put in request headers.
func loginName(t *testing.T) string {
	u, err := user.LookupId(strconv.Itoa(os.Getuid()))
	if err != nil {
		t.Fatalf("no login name for uid %d: %v", os.Getuid(), err)
	}
	return u.Username
}

// fakeServer answers every request with the next scripted reply (a null
// reply once they run out; none for Disconnect) and records each request
// as the DIS text the client sent, connection by connection in the order
// they were accepted (the commands make one connection at a time, but the
// end of one conversation may be read after the next has begun).
type fakeServer struct {
	ln      net.Listener
	mu      sync.Mutex
	replies []*batchreq.Reply
	got     [][]string // per accepted connection
	other   []string   // records of the interactive call-back
	wg      sync.WaitGroup
}

func newFakeServer(t *testing.T, replies []*batchreq.Reply) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{ln: ln, replies: replies}
	go f.serve()
	return f
}

func (f *fakeServer) port() int { return f.ln.Addr().(*net.TCPAddr).Port }

func (f *fakeServer) serve() {
	for {
		nc, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.got = append(f.got, nil)
		idx := len(f.got) - 1
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer nc.Close()
			f.conversation(nc, func(s string) {
				f.mu.Lock()
				defer f.mu.Unlock()
				f.got[idx] = append(f.got[idx], s)
			})
		}()
	}
}

// recorder keeps the bytes read since the last take.
type recorder struct {
	r   io.Reader
	buf bytes.Buffer
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.buf.Write(p[:n])
	return n, err
}

func (r *recorder) take() string {
	s := r.buf.String()
	r.buf.Reset()
	return s
}

func (f *fakeServer) conversation(nc net.Conn, record func(string)) {
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	rec := &recorder{r: nc}
	r := dis.NewReader(rec)
	interactive := 0
	for {
		req, err := batchreq.ReadRequest(r)
		raw := rec.take()
		if err != nil {
			if raw != "" {
				record("undecodable request " + strconv.Quote(raw))
			}
			return
		}
		record(raw)
		if req.Type == batchreq.PBS_BATCH_Disconnect {
			return
		}
		if qj, ok := req.Body.(*batchreq.QueueJob); ok {
			for _, a := range qj.Attrs {
				if a.Name == "interactive" {
					interactive, _ = strconv.Atoi(a.Value)
				}
			}
		}
		rp := f.next(req.Type)
		if _, err := nc.Write(rp.Append(nil)); err != nil {
			return
		}
		if req.Type == batchreq.PBS_BATCH_Commit && interactive > 0 && rp.Code == 0 {
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.callBack(interactive, rp.JobID)
			}()
		}
	}
}

// callBack plays the MOM of an interactive job: it connects to the port
// qsub advertised, sends the job id block, reads the terminal settings
// (TERM, control characters, window size), writes what the job prints
// and closes.
func (f *fakeServer) callBack(port int, jobID string) {
	nc, err := net.Dial("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		f.record("interactive call-back failed: " + err.Error())
		return
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	block := make([]byte, 1047)
	copy(block, jobID)
	if _, err := nc.Write(block); err != nil {
		f.record("interactive call-back: " + err.Error())
		return
	}
	settings := make([]byte, 80+6+80)
	if _, err := io.ReadFull(nc, settings); err != nil {
		f.record("interactive call-back: " + err.Error())
		return
	}
	term := strings.TrimRight(string(settings[:80]), "\x00")
	win := strings.TrimRight(string(settings[86:]), "\x00")
	f.record("interactive " + term + " " + win)
	_, _ = io.WriteString(nc, "job output\n")
}

// record keeps a line of the interactive call-back.
func (f *fakeServer) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.other = append(f.other, s)
}

// next returns the reply to a request of type reqType: the next scripted
// one, or, when there is none or it is nil, a successful reply of the
// kind the request expects.
func (f *fakeServer) next(reqType int) *batchreq.Reply {
	f.mu.Lock()
	defer f.mu.Unlock()
	var rp *batchreq.Reply
	if len(f.replies) > 0 {
		rp = f.replies[0]
		f.replies = f.replies[1:]
	}
	if rp == nil {
		return defaultReply(reqType)
	}
	c := *rp
	c.Location = strings.ReplaceAll(c.Location, "{P}", strconv.Itoa(f.port()))
	return &c
}

func defaultReply(reqType int) *batchreq.Reply {
	switch reqType {
	case batchreq.PBS_BATCH_SelectJobs:
		return selectReply()
	case batchreq.PBS_BATCH_StatusJob, batchreq.PBS_BATCH_StatusQue, batchreq.PBS_BATCH_StatusSvr,
		batchreq.PBS_BATCH_StatusNode, batchreq.PBS_BATCH_SelStat:
		return statusReply()
	case batchreq.PBS_BATCH_QueueJob:
		return jobReply(batchreq.BATCH_REPLY_CHOICE_Queue, "1.vm")
	case batchreq.PBS_BATCH_RdytoCommit:
		return jobReply(batchreq.BATCH_REPLY_CHOICE_RdytoCommit, "1.vm")
	case batchreq.PBS_BATCH_Commit:
		return jobReply(batchreq.BATCH_REPLY_CHOICE_Commit, "1.vm")
	}
	return batchreq.NullReply()
}

// stop closes the listener, waits for the conversations and returns the
// requests received.
func (f *fakeServer) stop() []string {
	f.ln.Close()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	var all []string
	for _, conv := range f.got {
		all = append(all, conv...)
	}
	return append(all, f.other...)
}

// testCase is one command line with the server's replies and what the
// command must send, print and return.
type testCase struct {
	name    string
	argv    []string
	stdin   string
	env     []string // extra NAME=value settings
	cfg     string   // torque.cfg content
	files   map[string]string
	replies []*batchreq.Reply
	// sent lists the requests in DIS text; "{U}" stands for the encoded
	// login name. A nil sent is not checked.
	sent   []string
	stdout string
	stderr string
	exit   int
	// check, if set, replaces the comparison of stdout and stderr.
	check func(t *testing.T, stdout, stderr string)
}

// result is what running a case produced.
type result struct {
	sent           []string
	stdout, stderr string
	exit           int
	elapsed        time.Duration
	work           string // the command's working directory
	bin            string // the directory of the commands
}

// environ returns the environment the commands run with: the fake server
// as default server "vm" ("vm" and "vm2" resolve to 127.0.0.1 through a
// HOSTALIASES file, and the batch port is the fake server's), the
// stand-in pbs_iff in iffDir and a private PBS home.
func (tc *testCase) environ(t *testing.T, home, work, iffDir string, port int) []string {
	aliases := filepath.Join(home, "hostaliases")
	if err := os.WriteFile(aliases, []byte("vm 127.0.0.1\nvm2 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "server_name"), []byte("vm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tc.cfg != "" {
		cfg := strings.ReplaceAll(tc.cfg, "{W}", work)
		if err := os.WriteFile(filepath.Join(home, "torque.cfg"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + work,
		"PWD=" + work,
		"LOGNAME=" + loginName(t),
		"SHELL=/bin/sh",
		"PBS_HOME=" + home,
		"PBS_DEFAULT=vm",
		"PBS_BATCH_SERVICE_PORT=" + strconv.Itoa(port),
		"PBSBINDIR=" + iffDir,
		"HOSTALIASES=" + aliases,
	}
	return append(env, tc.env...)
}

func (tc *testCase) run(t *testing.T) result {
	t.Helper()
	bin := commandsDir(t)
	f := newFakeServer(t, tc.replies)
	home, work := t.TempDir(), t.TempDir()
	for name, content := range tc.files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	port := f.port()
	expand := func(s string) string {
		return strings.ReplaceAll(strings.ReplaceAll(s, "{P}", strconv.Itoa(port)), "{W}", work)
	}
	var args []string
	for _, a := range tc.argv[1:] {
		args = append(args, expand(a))
	}
	cmd := exec.Command(filepath.Join(bin, tc.argv[0]), args...)
	cmd.Dir = work
	env := tc.environ(t, home, work, fakeIffDir(t), port)
	for i := range env {
		env[i] = expand(env[i])
	}
	cmd.Env = env
	cmd.Stdin = strings.NewReader(tc.stdin)
	start := time.Now()
	stdout, stderr, finished := e2e.RunFor(t, cmd, 30*time.Second)
	if !finished {
		t.Errorf("%s did not finish within 30 s", tc.argv[0])
	}
	elapsed := time.Since(start)
	sent := f.stop()
	return result{sent: sent, stdout: stdout, stderr: stderr,
		exit: cmd.ProcessState.ExitCode(), elapsed: elapsed, work: work, bin: bin}
}

// runCases runs a table of cases as subtests.
func runCases(t *testing.T, cases []testCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.verify(t, tc.run(t))
		})
	}
}

func (tc *testCase) verify(t *testing.T, got result) {
	t.Helper()
	user := string(dis.AppendString(nil, loginName(t)))
	if tc.sent != nil {
		var want []string
		for _, s := range tc.sent {
			want = append(want, strings.ReplaceAll(s, "{U}", user))
		}
		if strings.Join(want, "\n") != strings.Join(got.sent, "\n") {
			t.Errorf("requests sent:\n%s\nwant:\n%s", strings.Join(got.sent, "\n"), strings.Join(want, "\n"))
		}
	}
	if tc.check != nil {
		tc.check(t, got.stdout, got.stderr)
	} else {
		if want := strings.ReplaceAll(tc.stdout, "{B}", got.bin); got.stdout != want {
			t.Errorf("stdout:\n%q\nwant:\n%q", got.stdout, want)
		}
		if want := strings.ReplaceAll(tc.stderr, "{B}", got.bin); got.stderr != want {
			t.Errorf("stderr:\n%q\nwant:\n%q", got.stderr, want)
		}
	}
	if got.exit != tc.exit {
		t.Errorf("exit status %d, want %d (stderr %q)", got.exit, tc.exit, got.stderr)
	}
}

// Reply helpers.

func textReply(code int, text string) *batchreq.Reply { return batchreq.TextReply(code, text) }

func errReply(code int) *batchreq.Reply {
	return &batchreq.Reply{Code: code, Choice: batchreq.BATCH_REPLY_CHOICE_NULL}
}

func locateReply(loc string) *batchreq.Reply {
	return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Locate, Location: loc}
}

func selectReply(ids ...string) *batchreq.Reply {
	return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Select, JobIDs: ids}
}

// obj is a status object: its type, name and "name[.resource]=value"
// attributes.
func obj(objType int, name string, attrs ...string) batchreq.StatusObject {
	o := batchreq.StatusObject{ObjType: objType, Name: name}
	for _, a := range attrs {
		nv, val, _ := strings.Cut(a, "=")
		n, res, hasRes := strings.Cut(nv, ".")
		o.Attrs = append(o.Attrs, batchreq.Attr{Name: n, Resource: res, HasResource: hasRes, Value: val})
	}
	return o
}

func statusReply(objs ...batchreq.StatusObject) *batchreq.Reply {
	return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs}
}

func jobReply(choice int, id string) *batchreq.Reply { return batchreq.JobIDReply(choice, id) }

// disconnect is the Disconnect request.
const disconnect = "+2+12+59{U}"

// attrList returns the DIS text of an attribute list of
// "name[.resource]=value" entries, all with op SET, as the job commands
// send it.
func attrList(entries ...string) string {
	var l batchreq.AttrList
	for _, e := range entries {
		o := obj(0, "", e)
		l = append(l, o.Attrs...)
	}
	return string(l.Append(nil))
}

// hostName is this machine's host name, which qsub and qalter put in
// front of -o and -e paths: the tests compare with it rather than
// depending on what it is.
func hostName(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
