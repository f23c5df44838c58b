package policy

import (
	"reflect"
	"testing"

	"gopbs/sched/world"
)

func owner(o string) jobOpt { return func(j *world.Job) { j.Owner = o } }

// TestPluSJobSortKeys: a JobSortKey outside the §3.3 table orders the
// jobs by its keys in turn (seed 002 §3.2), its queue keys order the
// queues, and jobs equal under every key keep the server's order.
func TestPluSJobSortKeys(t *testing.T) {
	tests := []struct {
		name   string
		config string
		build  func(b *builder)
		want   []string
	}{
		{"LeastCPURequested", "JobSortKey: LeastCPURequested", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", nodes("1:ppn=3"))
			b.job(q, "2", nodes("1:ppn=1"))
			b.job(q, "3", nodes("1:ppn=2"))
		}, []string{"2", "3", "1"}},
		{"MostCPURequested uses ncpus", "JobSortKey: MostCPURequested", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", nodes("1"))
			b.job(q, "2", nodes("1:ppn=2"))
			b.job(q, "3", nodes("1"), ncpus(3))
		}, []string{"3", "2", "1"}},
		{"MostNodeRequested", "JobSortKey: MostNodeRequested", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", nodes("1"))
			b.job(q, "2", nodes("2"))
			b.job(q, "3", nodes("1"))
		}, []string{"2", "1", "3"}},
		{"LeastNodeRequested", "JobSortKey: LeastNodeRequested", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", nodes("2"))
			b.job(q, "2", nodes("1"))
		}, []string{"2", "1"}},
		{"LeastTimeRequested: no walltime is the longest", "JobSortKey: LeastTimeRequested", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", wall(300))
			b.job(q, "2")
			b.job(q, "3", wall(60))
		}, []string{"3", "1", "2"}},
		{"MostTimeRequested", "JobSortKey: MostTimeRequested", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", wall(300))
			b.job(q, "2", wall(600))
		}, []string{"2", "1"}},
		{"OwnersName: unlisted owners last", "JobSortKey: OwnersName\nOwnersOrder: bob, alice", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", owner("carol@h"))
			b.job(q, "2", owner("alice@h"))
			b.job(q, "3", owner("bob@h"))
		}, []string{"3", "2", "1"}},
		{"OwnersHost: domains", "JobSortKey: OwnersHost\nHostsOrder: hpcc.org, apgrid.org", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", owner("a@n1.apgrid.org"))
			b.job(q, "2", owner("b@login.hpcc.org"))
			b.job(q, "3", owner("c@other.net"))
			b.job(q, "4", owner("d@apgrid.org"))
		}, []string{"2", "1", "4", "3"}},
		{"OwnersGroup then JobPriority", "JobSortKey: OwnersGroup, JobPriority\nGroupsOrder: professors", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", group("students"), prio(9))
			b.job(q, "2", group("professors"), prio(1))
			b.job(q, "3", group("professors"), prio(5))
		}, []string{"3", "2", "1"}},
		{"SubmitTime after a job key", "JobSortKey: MostNodeRequested, SubmitTime", func(b *builder) {
			q := b.queue("batch", 0)
			b.job(q, "1", queued(10))
			b.job(q, "2", queued(50))
			b.job(q, "3", nodes("2"))
		}, []string{"3", "2", "1"}},
		{"queue keys order the queues", "JobSortKey: QueuePriority, ByQueue, MostCPURequested", func(b *builder) {
			qa, qb := b.queue("a", 1), b.queue("b", 9)
			b.job(qa, "a1", nodes("1:ppn=2"))
			b.job(qb, "b1", nodes("1"))
			b.job(qb, "b2", nodes("1:ppn=2"))
		}, []string{"b2", "b1", "a1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newWorld(2, 4)
			tt.build(b)
			s := New(parseConfig(t, tt.config), nil)
			sim, _ := runCycle(t, s, b)
			if got := started(sim); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("started %v, want %v\ncalls: %q", got, tt.want, sim.Calls)
			}
		})
	}
}
