// This file asks the MOMs of a cycle's nodes for their resources, many at a
// time (startMomQueries), keeping one query at a time per MOM endpoint
// (hostKeys).

package daemon

import (
	"context"
	"sync"

	"gopbs/internal/logline"
	"gopbs/sched/momquery"
	"gopbs/sched/world"
)

// momQueries is the number of MOM queries in flight at once.
const momQueries = 32

// queryMoms asks the MOM of every node that is not down or offline and
// applies the answers (startMomQueries and its finish at once).
func (d *Daemon) queryMoms(ctx context.Context, nodes []*world.Node) {
	d.startMomQueries(ctx, nodes)()
}

// startMomQueries starts asking the MOM of every node that is not down or
// offline and returns the function that waits for the answers and
// applies them (once, however often it is called); the nodes must not be
// used until it returned. The MOMs
// are asked concurrently (each query on its own RPP stream, with the
// same messages as one at a time), so a large cluster, or a few silent
// MOMs each waiting for its timeout, does not add up node by node. Nodes
// with the same momquery.HostKeyer key (the same MOM endpoint) are asked
// one after the other. Answers and failures are applied and logged in
// node order.
func (d *Daemon) startMomQueries(ctx context.Context, nodes []*world.Node) (finish func()) {
	if d.Mom == nil {
		return func() {}
	}
	var ask []*world.Node
	for _, n := range nodes {
		if n.State&(world.NodeDown|world.NodeOffline) == 0 {
			ask = append(ask, n)
		}
	}
	keys := d.hostKeys(ask)
	var hosts [][]int // indexes into ask, per host in order of appearance
	hostIndex := map[string]int{}
	for i, n := range ask {
		key := keys[n.Name]
		h, ok := hostIndex[key]
		if !ok {
			h = len(hosts)
			hostIndex[key] = h
			hosts = append(hosts, nil)
		}
		hosts[h] = append(hosts[h], i)
	}
	lines := d.momLines()
	answers := make([][]string, len(ask))
	failed := make([]bool, len(ask))
	next := make(chan []int)
	var wg sync.WaitGroup
	for range min(momQueries, len(hosts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for group := range next {
				for _, i := range group {
					a, err := d.Mom.Query(ctx, ask[i].Name, lines)
					answers[i], failed[i] = a, err != nil
				}
			}
		}()
	}
	go func() {
		for _, group := range hosts {
			next <- group
		}
		close(next)
	}()
	return sync.OnceFunc(func() {
		wg.Wait()
		for i, n := range ask {
			if failed[i] {
				d.Log.Log(logline.EventSystem, logline.ClassNode, n.Name, "Can not open connection to mom")
				continue
			}
			momquery.Apply(n, answers[i])
			if len(lines) > len(momquery.Lines) && len(answers[i]) > len(momquery.Lines) {
				momquery.ApplySysTime(n, answers[i][len(momquery.Lines)])
			}
		}
	})
}

// hostKeys returns the momquery.HostKeyer key of each node's name,
// resolving the names concurrently; without a HostKeyer the key is the
// name.
func (d *Daemon) hostKeys(nodes []*world.Node) map[string]string {
	keys := map[string]string{}
	keyer, ok := d.Mom.(momquery.HostKeyer)
	if !ok {
		for _, n := range nodes {
			keys[n.Name] = n.Name
		}
		return keys
	}
	var names []string
	for _, n := range nodes {
		if _, ok := keys[n.Name]; !ok {
			keys[n.Name] = ""
			names = append(names, n.Name)
		}
	}
	resolved := make([]string, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(momQueries, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				resolved[i] = keyer.HostKey(names[i])
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, name := range names {
		keys[name] = resolved[i]
	}
	return keys
}
