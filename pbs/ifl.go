package pbs

import "gopbs/batchreq"

// This file holds one method per batch request a client sends (the IFL
// calls pbs_statjob, pbs_submit, pbs_deljob, ...). Requests are built
// and replies decoded by package batchreq.

// status sends a StatusJob/StatusQue/StatusSvr/StatusNode request and
// returns the objects.
func (c *Conn) status(typ int, id string, attrs []Attr, ext string) ([]Status, error) {
	rp, err := c.roundTrip(c.request(typ, &batchreq.StatusReq{ID: id, Attrs: statusNames(attrs)}, ext))
	if err != nil {
		return nil, err
	}
	return statusObjects(rp.Status), nil
}

// StatusJob asks for the status of one job, the jobs of a queue or (id "")
// every job; attrs names the wanted attributes (nil: all).
func (c *Conn) StatusJob(id string, attrs []Attr, ext string) ([]Status, error) {
	return c.status(batchreq.PBS_BATCH_StatusJob, id, attrs, ext)
}

// StatusQueue asks for the status of a queue ("" for all queues).
func (c *Conn) StatusQueue(name string, attrs []Attr, ext string) ([]Status, error) {
	return c.status(batchreq.PBS_BATCH_StatusQue, name, attrs, ext)
}

// StatusServer asks for the server's status.
func (c *Conn) StatusServer(attrs []Attr, ext string) ([]Status, error) {
	return c.status(batchreq.PBS_BATCH_StatusSvr, "", attrs, ext)
}

// StatusNode asks for the status of a node ("" for all nodes).
func (c *Conn) StatusNode(name string, attrs []Attr, ext string) ([]Status, error) {
	return c.status(batchreq.PBS_BATCH_StatusNode, name, attrs, ext)
}

// SelStat selects jobs by the criteria and returns their status.
func (c *Conn) SelStat(criteria []Attr, ext string) ([]Status, error) {
	rp, err := c.roundTrip(c.request(batchreq.PBS_BATCH_SelStat, &batchreq.Select{Attrs: opList(criteria)}, ext))
	if err != nil {
		return nil, err
	}
	return statusObjects(rp.Status), nil
}

// SelectJobs returns the ids of the jobs matching the criteria.
func (c *Conn) SelectJobs(criteria []Attr, ext string) ([]string, error) {
	rp, err := c.roundTrip(c.request(batchreq.PBS_BATCH_SelectJobs, &batchreq.Select{Attrs: opList(criteria)}, ext))
	if err != nil {
		return nil, err
	}
	if len(rp.JobIDs) == 0 {
		return nil, nil
	}
	return rp.JobIDs, nil
}

// manage sends a Manage-body request (DeleteJob, HoldJob, Manager, ...).
func (c *Conn) manage(typ, cmd, objType int, name string, attrs []Attr, ext string) error {
	_, err := c.roundTrip(c.request(typ,
		&batchreq.Manage{Command: cmd, ObjType: objType, ObjName: name, Attrs: opList(attrs)}, ext))
	return err
}

// Manager sends a Manager request (qmgr, pbsnodes, qenable, ...); cmd is
// a batchreq.MGR_CMD_* and objType a batchreq.MGR_OBJ_* value.
func (c *Conn) Manager(cmd, objType int, name string, attrs []Attr, ext string) error {
	return c.manage(batchreq.PBS_BATCH_Manager, cmd, objType, name, attrs, ext)
}

// DeleteJob deletes a job; ext carries qdel's options (deldelay=, ...).
func (c *Conn) DeleteJob(id, ext string) error {
	return c.manage(batchreq.PBS_BATCH_DeleteJob, batchreq.MGR_CMD_DELETE, batchreq.MGR_OBJ_JOB, id, nil, ext)
}

// HoldJob adds holds ("u", "o", "s" or combinations) to a job.
func (c *Conn) HoldJob(id, holds, ext string) error {
	return c.manage(batchreq.PBS_BATCH_HoldJob, batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_JOB, id,
		[]Attr{{Name: "Hold_Types", Value: holds}}, ext)
}

// ReleaseJob removes holds from a job.
func (c *Conn) ReleaseJob(id, holds, ext string) error {
	return c.manage(batchreq.PBS_BATCH_ReleaseJob, batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_JOB, id,
		[]Attr{{Name: "Hold_Types", Value: holds}}, ext)
}

// ModifyJob alters job attributes.
func (c *Conn) ModifyJob(id string, attrs []Attr, ext string) error {
	return c.manage(batchreq.PBS_BATCH_ModifyJob, batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_JOB, id, attrs, ext)
}

// AsyModifyJob alters job attributes without waiting for the result.
func (c *Conn) AsyModifyJob(id string, attrs []Attr, ext string) error {
	return c.manage(batchreq.PBS_BATCH_AsyModifyJob, batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_JOB, id, attrs, ext)
}

// CheckpointJob asks for a checkpoint of a running job.
func (c *Conn) CheckpointJob(id, ext string) error {
	return c.manage(batchreq.PBS_BATCH_CheckpointJob, batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_JOB, id, nil, ext)
}

// jobIDRequest sends a request whose body is one job id.
func (c *Conn) jobIDRequest(typ int, id, ext string) (*batchreq.Reply, error) {
	return c.roundTrip(c.request(typ, &batchreq.JobID{ID: id}, ext))
}

// RerunJob requeues a running job; ext is "force" or a message.
func (c *Conn) RerunJob(id, ext string) error {
	_, err := c.jobIDRequest(batchreq.PBS_BATCH_Rerun, id, ext)
	return err
}

// LocateJob returns the server where a job is.
func (c *Conn) LocateJob(id string) (string, error) {
	rp, err := c.jobIDRequest(batchreq.PBS_BATCH_LocateJob, id, "")
	if err != nil {
		return "", err
	}
	return rp.Location, nil
}

// MoveJob moves a job to another queue ("queue[@server]").
func (c *Conn) MoveJob(id, dest, ext string) error {
	_, err := c.roundTrip(c.request(batchreq.PBS_BATCH_MoveJob, &batchreq.MoveJob{JobID: id, Destination: dest}, ext))
	return err
}

// OrderJob swaps the queue positions of two jobs.
func (c *Conn) OrderJob(id1, id2, ext string) error {
	_, err := c.roundTrip(c.request(batchreq.PBS_BATCH_OrderJob, &batchreq.MoveJob{JobID: id1, Destination: id2}, ext))
	return err
}

// RunJob runs a job, on the given hosts ("" lets the server choose); the
// reply comes once the MOM accepted the job. With async the AsyrunJob
// request is used, answered at once.
func (c *Conn) RunJob(id, hosts string, async bool, ext string) error {
	typ := batchreq.PBS_BATCH_RunJob
	if async {
		typ = batchreq.PBS_BATCH_AsyrunJob
	}
	_, err := c.roundTrip(c.request(typ, &batchreq.RunJob{JobID: id, Destination: hosts}, ext))
	return err
}

// SignalJob sends a signal ("SIGTERM", a number, "suspend", "resume").
func (c *Conn) SignalJob(id, signal, ext string) error {
	_, err := c.roundTrip(c.request(batchreq.PBS_BATCH_SignalJob, &batchreq.SignalJob{JobID: id, Signal: signal}, ext))
	return err
}

// MessJob writes a message into a running job's output (file:
// batchreq.MSG_OUT, batchreq.MSG_ERR or both).
func (c *Conn) MessJob(id string, file int, msg, ext string) error {
	_, err := c.roundTrip(c.request(batchreq.PBS_BATCH_MessJob,
		&batchreq.MessJob{JobID: id, FileOpt: file, Message: msg}, ext))
	return err
}

// Shutdown asks the server to shut down (manner: batchreq.SHUT_IMMEDIATE,
// SHUT_DELAY or SHUT_QUICK); the reply arrives when it is done.
func (c *Conn) Shutdown(manner int, ext string) error {
	_, err := c.roundTrip(c.request(batchreq.PBS_BATCH_Shutdown, &batchreq.Shutdown{Manner: manner}, ext))
	return err
}

// RescQuery asks for the availability of resources ("nodes=...").
// It returns the available, allocated, reserved and down counts per query.
func (c *Conn) RescQuery(queries []string) (avail, alloc, resv, down []int, err error) {
	rp, err := c.roundTrip(c.request(batchreq.PBS_BATCH_Rescq, &batchreq.Resc{Queries: queries}, ""))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return rp.Resc.Avail, rp.Resc.Alloc, rp.Resc.Resvd, rp.Resc.Down, nil
}

// Submit submits a job: QueueJob with the attributes to destination (""
// for the default queue), the script in JobScript chunks, then
// RdytoCommit and Commit. It returns the new job id. The script travels
// in pieces of batchreq.ScriptChunkSize bytes.
func (c *Conn) Submit(attrs []Attr, script []byte, destination, ext string) (string, error) {
	rp, err := c.roundTrip(c.request(batchreq.PBS_BATCH_QueueJob,
		&batchreq.QueueJob{Destination: destination, Attrs: opList(attrs)}, ext))
	if err != nil {
		return "", err
	}
	id := rp.JobID
	for seq := 0; len(script) > 0; seq++ {
		n := min(len(script), batchreq.ScriptChunkSize)
		chunk := &batchreq.JobFile{Seq: seq, FileType: batchreq.JScript, Data: script[:n]}
		if _, err := c.roundTrip(c.request(batchreq.PBS_BATCH_jobscript, chunk, "")); err != nil {
			return "", err
		}
		script = script[n:]
	}
	if _, err := c.jobIDRequest(batchreq.PBS_BATCH_RdytoCommit, id, ""); err != nil {
		return "", err
	}
	if _, err := c.jobIDRequest(batchreq.PBS_BATCH_Commit, id, ""); err != nil {
		return "", err
	}
	return id, nil
}
