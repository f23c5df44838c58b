package load

import (
	"errors"
	"strconv"
	"time"

	"gopbs/batchreq"
)

// ModeTakeover measures how long a server takes to serve: from the start
// of the run it connects again and again (every 10 ms) until a
// StatusServer succeeds, for a standby taking over from a killed active
// server (docs/failover.md). The result has one operation, whose latency
// is that time, and Objects is the server's total_jobs.
const ModeTakeover = "takeover"

// takeoverPoll is the pause between two attempts.
const takeoverPoll = 10 * time.Millisecond

func runTakeover(cfg Config) (*Result, error) {
	res := &Result{Mode: ModeTakeover}
	start := time.Now()
	var last error
	for {
		total, err := statServer(cfg.Dialer)
		if err == nil {
			res.OK = 1
			res.Elapsed = time.Since(start)
			res.Latencies = []time.Duration{res.Elapsed}
			res.Objects = total
			return res, nil
		}
		last = err
		if cfg.MaxTime > 0 && time.Since(start) > cfg.MaxTime {
			break
		}
		select {
		case <-cfg.Stop:
			res.Elapsed = time.Since(start)
			res.Failed = 1
			res.noteError(last)
			return res, nil
		case <-time.After(takeoverPoll):
		}
	}
	res.Elapsed = time.Since(start)
	res.Failed = 1
	res.noteError(last)
	return res, nil
}

// statServer connects, sends a StatusServer and returns the server's
// total_jobs.
func statServer(d *Dialer) (int, error) {
	c, err := d.Dial()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	p, err := c.must(batchreq.NewRequest(batchreq.PBS_BATCH_StatusSvr, c.user, &batchreq.StatusReq{}))
	if err != nil {
		return 0, err
	}
	if len(p.Status) == 0 {
		return 0, errors.New("StatusServer: empty reply")
	}
	v, _ := p.Status[0].Attrs.Get("total_jobs")
	n, _ := strconv.Atoi(v)
	return n, nil
}
