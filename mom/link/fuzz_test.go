package link

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"gopbs/mom/jobexec"
	"gopbs/mom/procfs"
	"gopbs/momproto"
)

// noExec is an Executor without jobs.
type noExec struct{}

func (noExec) Start(context.Context, *jobexec.Job) (int, error) { return 0, jobexec.ErrBadState }
func (noExec) Status(string) (jobexec.Status, error)            { return jobexec.Status{}, jobexec.ErrUnknownJob }
func (noExec) Signal(context.Context, string, string, bool) error {
	return jobexec.ErrUnknownJob
}
func (noExec) Epilogue(context.Context, string) (int, error)           { return 0, jobexec.ErrUnknownJob }
func (noExec) Purge(string) error                                      { return jobexec.ErrUnknownJob }
func (noExec) ScriptPath(prefix string) string                         { return "/nonexistent/" + prefix + ".SC" }
func (noExec) Sessions() []int                                         { return nil }
func (noExec) Adopt(*jobexec.Job, int, time.Time) error                { return jobexec.ErrBadState }
func (noExec) CopyFiles(context.Context, *jobexec.CopyRequest) error   { return jobexec.ErrUnknownJob }
func (noExec) DeleteFiles(context.Context, *jobexec.CopyRequest) error { return jobexec.ErrUnknownJob }

// FuzzRMMessage feeds arbitrary RM messages from a trusted privileged
// port to the resource monitor: it must never panic, and a reply, when
// there is one, must decode.
func FuzzRMMessage(f *testing.F) {
	for _, s := range []string{"+1+1+2+7loadave", "+1+1+2+5ncpus+4arch+7physmem+7loadave+8max_load2+10ideal_load",
		"+1+1+1", "+1+1+3", "+1+1+4", "+1+1+2+5diag3", "+1+1+2+8clearjob", "+1+1+2+17status_update_time",
		"+1+1+2+11size[fs=/]", "+1+1+9", "+1+1+2+4cycl"} {
		f.Add([]byte(s))
	}
	m, err := New(Options{Host: "vm", Home: f.TempDir(), Exec: noExec{}, Proc: procfs.FS{Root: "/nonexistent"},
		Resolve: func(context.Context, string) ([]netip.Addr, error) { return nil, nil }})
	if err != nil {
		f.Fatal(err)
	}
	m.addTrusted(netip.MustParseAddr("127.0.0.1"))
	peer := netip.MustParseAddrPort("127.0.0.1:1020")
	f.Fuzz(func(t *testing.T, b []byte) {
		reply, _ := m.rmMessage(context.Background(), peer, b)
		if reply == nil {
			return
		}
		if _, err := momproto.DecodeRMReply(reply); err != nil {
			t.Fatalf("reply %q does not decode: %v", reply, err)
		}
	})
}

// TestJobsItemOrder: the jobs= status item lists jobs in arrival order,
// as TORQUE does ("jobs=9.vm 10.vm", capture 57), not sorted as text.
func TestJobsItemOrder(t *testing.T) {
	m, err := New(Options{Host: "vm", Home: t.TempDir(), Exec: noExec{}})
	if err != nil {
		t.Fatal(err)
	}
	m.jobs["10.vm"] = &job{id: "10.vm", order: 2}
	m.jobs["9.vm"] = &job{id: "9.vm", order: 1}
	if v, rmerr := m.resource(context.Background(), "jobs"); v != "9.vm 10.vm" || rmerr != 0 {
		t.Errorf("jobs=%q (%d), want \"9.vm 10.vm\"", v, rmerr)
	}
	m.jobs = map[string]*job{}
	if v, _ := m.resource(context.Background(), "jobs"); v != " " {
		t.Errorf("jobs=%q with no jobs, want a single blank", v)
	}
}
