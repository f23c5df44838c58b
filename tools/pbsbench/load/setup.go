package load

import (
	"fmt"

	"gopbs/batchreq"
)

// Setup prepares a server for benchmarks over a privileged connection
// (d.Auth is ignored; the requests come from a reserved port, so d.User
// should be a manager such as root): it creates the execution queue
// queue if needed, enables and starts it, and makes it the default
// queue. When d.User is root it adds root to acl_roots, as a site must
// for root's jobs to be accepted.
func Setup(d *Dialer, queue string) error {
	pd := &Dialer{Addr: d.Addr, User: d.User, Timeout: d.Timeout}
	c, err := pd.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	mgr := func(cmd, obj int, name string, attrs ...batchreq.Attr) *batchreq.Request {
		return batchreq.NewRequest(batchreq.PBS_BATCH_Manager, d.User,
			&batchreq.Manage{Command: cmd, ObjType: obj, ObjName: name, Attrs: attrs})
	}
	// Creating fails harmlessly when the queue exists.
	if _, err := c.Do(mgr(batchreq.MGR_CMD_CREATE, batchreq.MGR_OBJ_QUEUE, queue,
		batchreq.NewAttr("queue_type", "execution"))); err != nil {
		return err
	}
	if d.User == "root" {
		// Refused harmlessly (PBSE_DUPLIST) when root is listed already.
		r := mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.Attr{Name: "acl_roots", Value: "root", Op: batchreq.INCR})
		if _, err := c.Do(r); err != nil {
			return err
		}
	}
	for _, r := range []*batchreq.Request{
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, queue, batchreq.NewAttr("enabled", "True"), batchreq.NewAttr("started", "True")),
		mgr(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_SERVER, "", batchreq.NewAttr("default_queue", queue)),
	} {
		if _, err := c.must(r); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	return nil
}
