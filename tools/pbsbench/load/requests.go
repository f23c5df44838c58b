package load

import (
	"fmt"
	"strings"

	"gopbs/batchreq"
)

// Job describes the jobs Submit creates.
type Job struct {
	// Queue is the destination ("" for the server's default queue).
	Queue string
	// Name is the Job_Name.
	Name string
	// Hold, when set, submits with a user hold (qsub -h) so that nothing
	// runs.
	Hold bool
	// Script is the job script.
	Script []byte
	// Extra attributes sent after the ones qsub always sends.
	Extra batchreq.AttrList
}

// ResourceList turns a qsub -l argument ("nodes=1:ppn=2,walltime=1:00:00")
// into Resource_List attributes. Each element is split at its first '='.
func ResourceList(spec string) batchreq.AttrList {
	var l batchreq.AttrList
	for _, e := range strings.Split(spec, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		name, value, _ := strings.Cut(e, "=")
		l = append(l, batchreq.NewResourceAttr("Resource_List", name, value))
	}
	return l
}

// DefaultScript is a small job script.
var DefaultScript = []byte("#!/bin/sh\n#PBS -N bench\nsleep 60\n")

// attrs returns the attribute list qsub sends for j, as user.
func (j *Job) attrs(user string) batchreq.AttrList {
	home := "/home/" + user
	if user == "root" {
		home = "/root"
	}
	hold := "n"
	if j.Hold {
		hold = "u"
	}
	name := j.Name
	if name == "" {
		name = "bench"
	}
	l := batchreq.AttrList{
		batchreq.NewAttr("Job_Name", name),
		batchreq.NewAttr("Variable_List", "PBS_O_HOME="+home+",PBS_O_LANG=C,PBS_O_LOGNAME="+user+
			",PBS_O_PATH=/usr/bin:/bin,PBS_O_SHELL=/bin/sh,PBS_O_HOST=localhost,PBS_O_WORKDIR="+home),
		batchreq.NewAttr("Checkpoint", "u"),
		batchreq.NewAttr("Hold_Types", hold),
		batchreq.NewAttr("Join_Path", "n"),
		batchreq.NewAttr("Keep_Files", "n"),
		batchreq.NewAttr("Mail_Points", "a"),
		batchreq.NewAttr("Priority", "0"),
		batchreq.NewAttr("Rerunable", "True"),
		batchreq.NewAttr("fault_tolerant", "False"),
	}
	return append(l, j.Extra...)
}

// Submit runs qsub's request sequence on c — QueueJob, JobScript,
// RdytoCommit, Commit — and returns the job id the server assigned. The
// job is acknowledged (durable, by the protocol's contract) once Submit
// returns without error.
func (c *Conn) Submit(j *Job) (string, error) {
	script := j.Script
	if script == nil {
		script = DefaultScript
	}
	p, err := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_QueueJob, c.user,
		&batchreq.QueueJob{Destination: j.Queue, Attrs: j.attrs(c.user)}))
	if err != nil {
		return "", err
	}
	id := p.JobID
	if id == "" {
		return "", fmt.Errorf("QueueJob: reply without a job id (choice %d)", p.Choice)
	}
	if _, err := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_jobscript, c.user,
		&batchreq.JobFile{JobID: id, Data: script})); err != nil {
		return id, err
	}
	if _, err := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_RdytoCommit, c.user, &batchreq.JobID{ID: id})); err != nil {
		return id, err
	}
	if _, err := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_Commit, c.user, &batchreq.JobID{ID: id})); err != nil {
		return id, err
	}
	return id, nil
}

// StatJobs asks for the full status of every job (qstat -f) and returns
// the number of job objects in the reply.
func (c *Conn) StatJobs() (int, error) {
	p, err := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, c.user, &batchreq.StatusReq{}))
	if err != nil {
		return 0, err
	}
	return len(p.Status), nil
}

// SelectJobs runs a SelectJobs (qselect) with the given criteria and
// returns the number of job ids selected.
func (c *Conn) SelectJobs(criteria batchreq.AttrList) (int, error) {
	p, err := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_SelectJobs, c.user, &batchreq.Select{Attrs: criteria}))
	if err != nil {
		return 0, err
	}
	return len(p.JobIDs), nil
}

// StatJobIDs returns the ids of every job (a StatusJob asking for the
// job_state attribute only, which keeps the reply small).
func (c *Conn) StatJobIDs() ([]string, error) {
	p, err := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, c.user,
		&batchreq.StatusReq{Attrs: batchreq.StatusNames("job_state")}))
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(p.Status))
	for i, o := range p.Status {
		ids[i] = o.Name
	}
	return ids, nil
}
