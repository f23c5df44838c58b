package link

import (
	"testing"

	"gopbs/batchreq"
	"gopbs/mom/jobexec"
)

// ptyExec reports one running interactive job on a terminal.
type ptyExec struct{ noExec }

func (ptyExec) Status(id string) (jobexec.Status, error) {
	return jobexec.Status{JobID: id, SessionID: 4242, State: jobexec.StateRunning, Terminal: "/dev/pts/3"}, nil
}

// TestInteractiveSpec: the interactive attribute carries qsub's port,
// inter_cmd the command of qsub -I -x.
func TestInteractiveSpec(t *testing.T) {
	for _, tc := range []struct {
		value, cmd  string
		interactive bool
		port        int
	}{
		{"40123", "", true, 40123},
		{"40123", "hostname", true, 40123},
		{"0", "", false, 0},
		{"True", "", true, 0}, // no port: the engine rejects it
	} {
		attrs := batchreq.AttrList{batchreq.NewAttr("interactive", tc.value)}
		if tc.cmd != "" {
			attrs = append(attrs, batchreq.NewAttr("inter_cmd", tc.cmd))
		}
		j := jobSpec("1.x", attrs)
		if j.Interactive != tc.interactive || j.InteractivePort != tc.port || j.InteractiveCmd != tc.cmd {
			t.Errorf("interactive=%q inter_cmd=%q: got %v/%d/%q, want %v/%d/%q", tc.value, tc.cmd,
				j.Interactive, j.InteractivePort, j.InteractiveCmd, tc.interactive, tc.port, tc.cmd)
		}
	}
}

// TestInteractiveStatus: the first StatusJob of an interactive job
// reports its terminal as Error_Path and Output_Path with session_id,
// later ones do not.
func TestInteractiveStatus(t *testing.T) {
	m, err := New(Options{Host: "vm", Home: t.TempDir(), Exec: ptyExec{}})
	if err != nil {
		t.Fatal(err)
	}
	j := &job{id: "7.vm", stage: stageRunning}
	attrs, ok := m.jobStatus(j)
	want := []string{"Error_Path=vm:/dev/pts/3", "Output_Path=vm:/dev/pts/3", "session_id=4242"}
	if !ok || len(attrs) != len(want) {
		t.Fatalf("first status %+v, want %v", attrs, want)
	}
	for i, a := range attrs {
		if got := a.Name + "=" + a.Value; got != want[i] {
			t.Errorf("attribute %d = %s, want %s", i, got, want[i])
		}
	}
	if attrs, _ := m.jobStatus(j); len(attrs) != 0 {
		t.Errorf("second status %+v, want nothing sent again", attrs)
	}
}
