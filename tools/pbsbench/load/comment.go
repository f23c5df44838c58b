package load

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"gopbs/batchreq"
)

// SetComment sets the comment of job id (a ModifyJob, as the scheduler
// sends for every job it cannot run).
func (c *Conn) SetComment(id, comment string) error {
	_, err := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_ModifyJob, c.user, &batchreq.Manage{
		Command: batchreq.MGR_CMD_SET, ObjType: batchreq.MGR_OBJ_JOB, ObjName: id,
		Attrs: batchreq.AttrList{batchreq.NewAttr("comment", comment)},
	}))
	return err
}

// runComments is Run for ModeComment: every client keeps one connection
// and sets the comments of the server's jobs in turn, one request after
// the other, each with a new text (the scheduler's pattern over its
// connection). The job ids are read once, before the clock starts.
func runComments(cfg Config, clients int) (*Result, error) {
	c, err := cfg.Dialer.Dial()
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	ids, err := c.StatJobIDs()
	c.Close()
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	if len(ids) == 0 {
		return nil, errors.New("comment mode needs jobs on the server (run submit mode first)")
	}
	res := &Result{Mode: cfg.Mode, Kinds: map[string]int{}}
	var (
		issued, done, failed atomic.Int64
		mu                   sync.Mutex
		wg                   sync.WaitGroup
		lats                 = make([][]time.Duration, clients)
	)
	start := time.Now()
	deadline := time.Time{}
	if cfg.MaxTime > 0 {
		deadline = start.Add(cfg.MaxTime)
	}
	note := func(err error) {
		failed.Add(1)
		mu.Lock()
		res.noteError(err)
		mu.Unlock()
	}
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c *Conn
			defer func() {
				if c != nil {
					c.Close()
				}
			}()
			for {
				n := issued.Add(1)
				if n > int64(cfg.Ops) || !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				select {
				case <-cfg.Stop:
					return
				default:
				}
				t0 := time.Now()
				if c == nil {
					dc, err := cfg.Dialer.Dial()
					if err != nil {
						note(err)
						continue
					}
					c = dc
				}
				id := ids[int(n-1)%len(ids)]
				if err := c.SetComment(id, fmt.Sprintf("Not Running: pbsbench comment %d", n)); err != nil {
					c.Abort()
					c = nil
					note(err)
					continue
				}
				lats[w] = append(lats[w], time.Since(t0))
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.OK = int(done.Load())
	res.Failed = int(failed.Load())
	res.Objects = len(ids)
	res.addLatencies(lats)
	return res, nil
}
