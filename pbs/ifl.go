package pbs

// This file holds one method per batch request a client sends (the IFL
// calls pbs_statjob, pbs_submit, pbs_deljob, ...).

// statusRequest sends a StatusJob/StatusQue/StatusSvr/StatusNode or
// SelStat-less status request and returns the objects.
func (c *Conn) status(typ int, id string, attrs []Attr, ext string) ([]Status, error) {
	var e encoder
	e.header(typ, c.user)
	e.s(id)
	e.attrl(attrs)
	e.ext(ext)
	rp, err := c.roundTrip(e.b, BATCH_REPLY_CHOICE_NULL, BATCH_REPLY_CHOICE_Status)
	if err != nil {
		return nil, err
	}
	return rp.status, nil
}

// StatusJob asks for the status of one job, the jobs of a queue or (id "")
// every job; attrs names the wanted attributes (nil: all).
func (c *Conn) StatusJob(id string, attrs []Attr, ext string) ([]Status, error) {
	return c.status(PBS_BATCH_StatusJob, id, attrs, ext)
}

// StatusQueue asks for the status of a queue ("" for all queues).
func (c *Conn) StatusQueue(name string, attrs []Attr, ext string) ([]Status, error) {
	return c.status(PBS_BATCH_StatusQue, name, attrs, ext)
}

// StatusServer asks for the server's status.
func (c *Conn) StatusServer(attrs []Attr, ext string) ([]Status, error) {
	return c.status(PBS_BATCH_StatusSvr, "", attrs, ext)
}

// StatusNode asks for the status of a node ("" for all nodes).
func (c *Conn) StatusNode(name string, attrs []Attr, ext string) ([]Status, error) {
	return c.status(PBS_BATCH_StatusNode, name, attrs, ext)
}

// SelStat selects jobs by the criteria and returns their status.
func (c *Conn) SelStat(criteria []Attr, ext string) ([]Status, error) {
	var e encoder
	e.header(PBS_BATCH_SelStat, c.user)
	e.attropl(criteria)
	e.ext(ext)
	rp, err := c.roundTrip(e.b, BATCH_REPLY_CHOICE_NULL, BATCH_REPLY_CHOICE_Status)
	if err != nil {
		return nil, err
	}
	return rp.status, nil
}

// SelectJobs returns the ids of the jobs matching the criteria.
func (c *Conn) SelectJobs(criteria []Attr, ext string) ([]string, error) {
	var e encoder
	e.header(PBS_BATCH_SelectJobs, c.user)
	e.attropl(criteria)
	e.ext(ext)
	rp, err := c.roundTrip(e.b, BATCH_REPLY_CHOICE_Select)
	if err != nil {
		return nil, err
	}
	return rp.selected, nil
}

// manage sends a Manage-body request (DeleteJob, HoldJob, Manager, ...).
func (c *Conn) manage(typ, cmd, objType int, name string, attrs []Attr, ext string) error {
	var e encoder
	e.header(typ, c.user)
	e.u(cmd)
	e.u(objType)
	e.s(name)
	e.attropl(attrs)
	e.ext(ext)
	_, err := c.roundTrip(e.b)
	return err
}

// Manager sends a Manager request (qmgr, pbsnodes, qenable, ...).
func (c *Conn) Manager(cmd, objType int, name string, attrs []Attr, ext string) error {
	return c.manage(PBS_BATCH_Manager, cmd, objType, name, attrs, ext)
}

// DeleteJob deletes a job; ext carries qdel's options (deldelay=, ...).
func (c *Conn) DeleteJob(id, ext string) error {
	return c.manage(PBS_BATCH_DeleteJob, MGR_CMD_DELETE, MGR_OBJ_JOB, id, nil, ext)
}

// HoldJob adds holds ("u", "o", "s" or combinations) to a job.
func (c *Conn) HoldJob(id, holds, ext string) error {
	return c.manage(PBS_BATCH_HoldJob, MGR_CMD_SET, MGR_OBJ_JOB, id,
		[]Attr{{Name: "Hold_Types", Value: holds}}, ext)
}

// ReleaseJob removes holds from a job.
func (c *Conn) ReleaseJob(id, holds, ext string) error {
	return c.manage(PBS_BATCH_ReleaseJob, MGR_CMD_SET, MGR_OBJ_JOB, id,
		[]Attr{{Name: "Hold_Types", Value: holds}}, ext)
}

// ModifyJob alters job attributes.
func (c *Conn) ModifyJob(id string, attrs []Attr, ext string) error {
	return c.manage(PBS_BATCH_ModifyJob, MGR_CMD_SET, MGR_OBJ_JOB, id, attrs, ext)
}

// AsyModifyJob alters job attributes without waiting for the result.
func (c *Conn) AsyModifyJob(id string, attrs []Attr, ext string) error {
	return c.manage(PBS_BATCH_AsyModifyJob, MGR_CMD_SET, MGR_OBJ_JOB, id, attrs, ext)
}

// CheckpointJob asks for a checkpoint of a running job.
func (c *Conn) CheckpointJob(id, ext string) error {
	return c.manage(PBS_BATCH_CheckpointJob, MGR_CMD_SET, MGR_OBJ_JOB, id, nil, ext)
}

// jobIDRequest sends a request whose body is one job id.
func (c *Conn) jobIDRequest(typ int, id, ext string, accept ...int) (*reply, error) {
	var e encoder
	e.header(typ, c.user)
	e.s(id)
	e.ext(ext)
	return c.roundTrip(e.b, accept...)
}

// RerunJob requeues a running job; ext is "force" or a message.
func (c *Conn) RerunJob(id, ext string) error {
	_, err := c.jobIDRequest(PBS_BATCH_Rerun, id, ext)
	return err
}

// LocateJob returns the server where a job is.
func (c *Conn) LocateJob(id string) (string, error) {
	rp, err := c.jobIDRequest(PBS_BATCH_LocateJob, id, "",
		BATCH_REPLY_CHOICE_NULL, BATCH_REPLY_CHOICE_Locate)
	if err != nil {
		return "", err
	}
	return rp.id, nil
}

// MoveJob moves a job to another queue ("queue[@server]").
func (c *Conn) MoveJob(id, dest, ext string) error {
	return c.twoStrings(PBS_BATCH_MoveJob, id, dest, ext)
}

// OrderJob swaps the queue positions of two jobs.
func (c *Conn) OrderJob(id1, id2, ext string) error {
	return c.twoStrings(PBS_BATCH_OrderJob, id1, id2, ext)
}

func (c *Conn) twoStrings(typ int, a, b, ext string) error {
	var e encoder
	e.header(typ, c.user)
	e.s(a)
	e.s(b)
	e.ext(ext)
	_, err := c.roundTrip(e.b)
	return err
}

// RunJob runs a job, on the given hosts ("" lets the server choose); the
// reply comes once the MOM accepted the job. With async the AsyrunJob
// request is used, answered at once.
func (c *Conn) RunJob(id, hosts string, async bool, ext string) error {
	typ := PBS_BATCH_RunJob
	if async {
		typ = PBS_BATCH_AsyrunJob
	}
	var e encoder
	e.header(typ, c.user)
	e.s(id)
	e.s(hosts)
	e.u(0) // resource handle
	e.ext(ext)
	_, err := c.roundTrip(e.b)
	return err
}

// SignalJob sends a signal ("SIGTERM", a number, "suspend", "resume").
func (c *Conn) SignalJob(id, signal, ext string) error {
	return c.twoStrings(PBS_BATCH_SignalJob, id, signal, ext)
}

// Message file options of MessJob.
const (
	MSG_OUT = 1
	MSG_ERR = 2
)

// MessJob writes a message into a running job's output (file: MSG_OUT,
// MSG_ERR or both).
func (c *Conn) MessJob(id string, file int, msg, ext string) error {
	var e encoder
	e.header(PBS_BATCH_MessJob, c.user)
	e.s(id)
	e.u(file)
	e.s(msg)
	e.ext(ext)
	_, err := c.roundTrip(e.b)
	return err
}

// Shutdown manners.
const (
	SHUT_IMMEDIATE = 0
	SHUT_DELAY     = 1
	SHUT_QUICK     = 2
)

// Shutdown asks the server to shut down; the reply arrives when it is done.
func (c *Conn) Shutdown(manner int, ext string) error {
	var e encoder
	e.header(PBS_BATCH_Shutdown, c.user)
	e.u(manner)
	e.ext(ext)
	_, err := c.roundTrip(e.b)
	return err
}

// RescQuery asks for the availability of resources ("nodes=...").
// It returns the available, allocated, reserved and down counts per query.
func (c *Conn) RescQuery(queries []string) (avail, alloc, resv, down []int, err error) {
	var e encoder
	e.header(PBS_BATCH_Rescq, c.user)
	e.u(0)
	e.u(len(queries))
	for _, q := range queries {
		e.s(q)
	}
	e.ext("")
	rp, err := c.roundTrip(e.b, BATCH_REPLY_CHOICE_RescQuery)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return rp.rescq[0], rp.rescq[1], rp.rescq[2], rp.rescq[3], nil
}

// ScriptChunk is the size of the JobScript pieces a submission sends.
const ScriptChunk = 65536

// Submit submits a job: QueueJob with the attributes to destination (""
// for the default queue), the script in JobScript chunks, then
// RdytoCommit and Commit. It returns the new job id.
func (c *Conn) Submit(attrs []Attr, script []byte, destination, ext string) (string, error) {
	var e encoder
	e.header(PBS_BATCH_QueueJob, c.user)
	e.s("")
	e.s(destination)
	e.attropl(attrs)
	e.ext(ext)
	rp, err := c.roundTrip(e.b, BATCH_REPLY_CHOICE_Queue)
	if err != nil {
		return "", err
	}
	id := rp.id
	for seq := 0; len(script) > 0; seq++ {
		n := min(len(script), ScriptChunk)
		e = encoder{}
		e.header(PBS_BATCH_jobscript, c.user)
		e.u(seq)
		e.u(0) // file type: job script
		e.u(n)
		e.s("")
		e.s(string(script[:n]))
		e.ext("")
		if _, err := c.roundTrip(e.b); err != nil {
			return "", err
		}
		script = script[n:]
	}
	if _, err := c.jobIDRequest(PBS_BATCH_RdytoCommit, id, "", BATCH_REPLY_CHOICE_RdytoCommit, BATCH_REPLY_CHOICE_NULL); err != nil {
		return "", err
	}
	if _, err := c.jobIDRequest(PBS_BATCH_Commit, id, "", BATCH_REPLY_CHOICE_Commit, BATCH_REPLY_CHOICE_NULL); err != nil {
		return "", err
	}
	return id, nil
}
