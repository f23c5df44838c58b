package load

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"gopbs/batchreq"
)

// Modes of Run.
const (
	ModeSubmit = "submit" // qsub's four requests, each submission on a new connection
	ModeStat   = "stat"   // a full StatusJob (qstat -f) on a new connection
	ModeSelect = "select" // a SelectJobs (qselect) on a new connection
	ModeMixed  = "mixed"  // 80% submit, 10% select, 10% status of one job
	// ModeComment sets job comments (ModifyJob) over one connection per
	// client, in sequence, as the scheduler does.
	ModeComment = "comment"
)

// Config drives Run.
type Config struct {
	Mode   string
	Dialer *Dialer
	// Ops is the number of operations (submissions, status requests, ...).
	Ops int
	// Clients is the number of concurrent clients (default 1).
	Clients int
	// MaxTime stops the run early (0: no limit).
	MaxTime time.Duration
	// Job is what submit and mixed submit.
	Job Job
	// Criteria are the select mode's selection (default: job_state=Q).
	Criteria batchreq.AttrList
	// Window, if > 0, calls Progress after every Window completed
	// operations with the rate of that window.
	Window   int
	Progress func(w WindowStats)
	// Stop, if set, ends the run when closed (operations under way
	// finish or fail first).
	Stop <-chan struct{}
	// OnSubmit, if set, is called with every acknowledged job id (from
	// any client goroutine).
	OnSubmit func(id string)
	// Raw runs mode submit with an authenticating dialer on one OS
	// thread that drives every client with raw system calls and epoll,
	// the requests encoded once and nothing allocated per submission: a
	// cheaper generator sending the same bytes (Linux; other modes and
	// platforms ignore it).
	Raw bool
}

// WindowStats describes one window of operations.
type WindowStats struct {
	Done    int           // operations completed so far
	Failed  int           // failures so far
	Elapsed time.Duration // since the start
	Rate    float64       // operations per second within the window
}

// Result is the outcome of a run.
type Result struct {
	Mode   string
	OK     int
	Failed int
	// Refused counts the failures that were error replies from the
	// server (the others are connection or protocol failures).
	Refused   int
	Elapsed   time.Duration
	Latencies []time.Duration // sorted, of successful operations
	// Objects is the number of objects the last stat or select returned.
	Objects int
	// Errors holds the first few error messages.
	Errors []string
	// Kinds counts successful operations per kind in mixed mode.
	Kinds map[string]int
}

// Rate is successful operations per second.
func (r *Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// Percentile returns the q-th (0–1) latency percentile.
func (r *Result) Percentile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(q * float64(len(r.Latencies)-1))
	return r.Latencies[i]
}

// String is pbsbench's summary line.
func (r *Result) String() string {
	return fmt.Sprintf("mode=%s ok=%d failed=%d elapsed=%.3fs rate=%.1f/s p50=%s p99=%s",
		r.Mode, r.OK, r.Failed, r.Elapsed.Seconds(), r.Rate(),
		fmtDur(r.Percentile(0.50)), fmtDur(r.Percentile(0.99)))
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.0fus", float64(d)/1e3)
	}
}

const maxErrors = 5

// noteError counts a failure's kind and keeps its message if fewer than
// maxErrors are kept. Concurrent callers must hold a lock.
func (r *Result) noteError(err error) {
	if _, ok := errors.AsType[*ReplyError](err); ok {
		r.Refused++
	}
	if len(r.Errors) < maxErrors {
		r.Errors = append(r.Errors, err.Error())
	}
}

// addLatencies gathers the clients' latencies, sorted.
func (r *Result) addLatencies(perClient [][]time.Duration) {
	for _, l := range perClient {
		r.Latencies = append(r.Latencies, l...)
	}
	slices.Sort(r.Latencies)
}

// Run performs cfg.Ops operations with cfg.Clients concurrent clients.
func Run(cfg Config) (*Result, error) {
	switch cfg.Mode {
	case ModeSubmit, ModeStat, ModeSelect, ModeMixed, ModeComment, ModeTakeover:
	default:
		return nil, fmt.Errorf("unknown mode %q", cfg.Mode)
	}
	if cfg.Dialer == nil {
		return nil, fmt.Errorf("no dialer")
	}
	if cfg.Mode == ModeTakeover {
		return runTakeover(cfg)
	}
	clients := max(cfg.Clients, 1)
	criteria := cfg.Criteria
	if criteria == nil {
		criteria = batchreq.AttrList{{Name: "job_state", Value: "Q", Op: batchreq.EQ}}
	}
	var (
		issued, done, failed, completed atomic.Int64
		mu                              sync.Mutex
		res                             = &Result{Mode: cfg.Mode, Kinds: map[string]int{}}
		lastIDs                         []string // recent job ids for mixed-mode status
		winStart                        = time.Now()
		wg                              sync.WaitGroup
	)
	start := time.Now()
	deadline := time.Time{}
	if cfg.MaxTime > 0 {
		deadline = start.Add(cfg.MaxTime)
	}
	note := func(err error) {
		mu.Lock()
		res.noteError(err)
		mu.Unlock()
	}
	finish := func(ok bool) {
		if ok {
			done.Add(1)
		}
		n := completed.Add(1)
		if cfg.Window > 0 && cfg.Progress != nil && n%int64(cfg.Window) == 0 {
			mu.Lock()
			now := time.Now()
			w := WindowStats{Done: int(n), Failed: int(failed.Load()), Elapsed: now.Sub(start),
				Rate: float64(cfg.Window) / now.Sub(winStart).Seconds()}
			winStart = now
			cfg.Progress(w)
			mu.Unlock()
		}
	}
	if cfg.Raw && rawSupported && cfg.Mode == ModeSubmit && cfg.Dialer.Auth {
		return runRawMode(cfg, clients)
	}
	if cfg.Mode == ModeComment {
		return runComments(cfg, clients)
	}
	lats := make([][]time.Duration, clients)
	for w := range clients {
		lats[w] = make([]time.Duration, 0, min(cfg.Ops/clients+1, 1<<20))
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			for issued.Add(1) <= int64(cfg.Ops) {
				if !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				select {
				case <-cfg.Stop:
					return
				default:
				}
				kind := cfg.Mode
				if kind == ModeMixed {
					switch x := rng.IntN(10); {
					case x == 0:
						kind = ModeSelect
					case x == 1:
						kind = "statone"
					default:
						kind = ModeSubmit
					}
				}
				t0 := time.Now()
				c, err := cfg.Dialer.Dial()
				if err != nil {
					failed.Add(1)
					note(err)
					finish(false)
					continue
				}
				var objects int
				switch kind {
				case ModeSubmit:
					var id string
					id, err = c.Submit(&cfg.Job)
					if err == nil {
						if cfg.OnSubmit != nil {
							cfg.OnSubmit(id)
						}
						if cfg.Mode == ModeMixed {
							mu.Lock()
							if len(lastIDs) >= 64 {
								lastIDs = lastIDs[1:]
							}
							lastIDs = append(lastIDs, id)
							mu.Unlock()
						}
					}
				case ModeStat:
					objects, err = c.StatJobs()
				case ModeSelect:
					objects, err = c.SelectJobs(criteria)
				case "statone":
					mu.Lock()
					id := ""
					if len(lastIDs) > 0 {
						id = lastIDs[rng.IntN(len(lastIDs))]
					}
					mu.Unlock()
					if id == "" {
						_, err = c.StatJobIDs()
					} else {
						_, err = c.must(batchreq.NewRequest(batchreq.PBS_BATCH_StatusJob, c.user, &batchreq.StatusReq{ID: id}))
					}
				}
				if err != nil {
					c.Abort()
					failed.Add(1)
					note(err)
					finish(false)
					continue
				}
				c.Close()
				lats[w] = append(lats[w], time.Since(t0))
				mu.Lock()
				res.Kinds[kind]++
				if kind == cfg.Mode {
					res.Objects = objects
				}
				mu.Unlock()
				finish(true)
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.OK = int(done.Load())
	res.Failed = int(failed.Load())
	res.addLatencies(lats)
	return res, nil
}

// runRawMode is Run for cfg.Raw: the clients' submissions are driven by
// runRaw, with the same accounting as the other modes.
func runRawMode(cfg Config, clients int) (*Result, error) {
	res := &Result{Mode: cfg.Mode, Kinds: map[string]int{}}
	res.Latencies = make([]time.Duration, 0, min(cfg.Ops, 1<<22))
	start := time.Now()
	deadline := time.Time{}
	if cfg.MaxTime > 0 {
		deadline = start.Add(cfg.MaxTime)
	}
	issued, completed := 0, 0
	winStart := start
	finish := func() {
		completed++
		if cfg.Window > 0 && cfg.Progress != nil && completed%cfg.Window == 0 {
			now := time.Now()
			cfg.Progress(WindowStats{Done: completed, Failed: res.Failed, Elapsed: now.Sub(start),
				Rate: float64(cfg.Window) / now.Sub(winStart).Seconds()})
			winStart = now
		}
	}
	hooks := rawHooks{
		claim: func() bool {
			if issued >= cfg.Ops || !deadline.IsZero() && time.Now().After(deadline) {
				return false
			}
			select {
			case <-cfg.Stop:
				return false
			default:
			}
			issued++
			return true
		},
		ok: func(id []byte, d time.Duration) {
			res.OK++
			res.Latencies = append(res.Latencies, d)
			if cfg.OnSubmit != nil {
				cfg.OnSubmit(string(id))
			}
			finish()
		},
		fail: func(err error) {
			res.Failed++
			res.noteError(err)
			finish()
		},
	}
	if err := runRaw(cfg.Dialer, &cfg.Job, clients, hooks); err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	res.Kinds[cfg.Mode] = res.OK
	slices.Sort(res.Latencies)
	return res, nil
}
