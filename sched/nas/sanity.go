package nas

import (
	"fmt"
	"sort"

	"gopbs/internal/logline"
	"gopbs/sched/nas/config"
	"gopbs/sched/world"
)

// queueSanity checks the configured queues against the server's, once,
// at the first cycle (the seed's "Queue Sanity"): every queue exists;
// the batch and external queues are execution queues; the submit,
// special and dedicated queues are execution queues too (a routing queue
// would send the jobs on before the scheduler sees them); and the submit
// queue's limits are at least the union of the batch queues' limits, as
// the seed requires (otherwise the server refuses jobs a batch queue
// could run). Each problem is logged with a suggested fix; any problem
// is returned as config.Problems.
func (c *cycle) queueSanity() error {
	cfg := c.s.Config
	var ps config.Problems
	add := func(fix, format string, args ...any) {
		ps = append(ps, &config.Problem{Text: fmt.Sprintf(format, args...), Fix: fix})
	}
	type role struct {
		spec *config.QueueSpec
		name string
	}
	var roles []role
	for _, r := range []role{{cfg.SubmitQueue, "SUBMIT_QUEUE"}, {cfg.SpecialQueue, "SPECIAL_QUEUE"}, {cfg.DedicatedQueue, "DEDICATED_QUEUE"}} {
		if r.spec != nil {
			roles = append(roles, r)
		}
	}
	for i := range cfg.BatchQueues {
		roles = append(roles, role{&cfg.BatchQueues[i], "BATCH_QUEUES"})
	}
	for i := range cfg.ExternalQueues {
		roles = append(roles, role{&cfg.ExternalQueues[i], "EXTERNAL_QUEUES"})
	}
	for _, r := range roles {
		q := c.queues[r.spec.Queue]
		switch {
		case q == nil:
			add(fmt.Sprintf("create it (qmgr -c 'create queue %s queue_type=execution') or correct %s", r.spec.Queue, r.name),
				"%s queue %s does not exist on the server", r.name, r.spec.Queue)
		case !q.Execution():
			add(fmt.Sprintf("qmgr -c 'set queue %s queue_type=execution'", q.Name),
				"%s queue %s is a %s queue, not an execution queue", r.name, q.Name, q.Type)
		}
	}
	if cfg.SubmitQueue != nil {
		if sub := c.queues[cfg.SubmitQueue.Queue]; sub != nil {
			c.unionCheck(sub, add)
		}
	}
	for _, p := range ps {
		c.logServer(logline.EventError, "Queue Sanity: "+p.Error())
	}
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// unionCheck reports each resources_max limit of the submit queue that
// is below the same limit of a batch queue.
func (c *cycle) unionCheck(sub *world.Queue, add func(fix, format string, args ...any)) {
	need := map[string]float64{}
	text := map[string]string{}
	for _, spec := range c.s.Config.BatchQueues {
		q := c.queues[spec.Queue]
		if q == nil {
			continue
		}
		for name, v := range q.Resources.Max.Values {
			if n, ok := world.ParseAmount(v); ok && n > need[name] {
				need[name], text[name] = n, v
			}
		}
	}
	names := make([]string, 0, len(need))
	for name := range need {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		have, ok := world.ParseAmount(sub.Resources.Max.Values[name])
		if ok && have < need[name] {
			add(fmt.Sprintf("qmgr -c 'set queue %s resources_max.%s = %s'", sub.Name, name, text[name]),
				"submit queue %s has resources_max.%s %s, below the batch queues' %s: the server would refuse jobs they can run",
				sub.Name, name, sub.Resources.Max.Values[name], text[name])
		}
	}
}
