package reservable

import (
	"cmp"
	"slices"

	"gopbs/sched/config"
)

// SortNodes orders candidate nodes by PluS's NodeSortKey (seed 002
// §3.2), the first key deciding and the next ones breaking ties; nodes
// equal under every key keep their order. Without keys the order is
// unchanged. NodeName sorts by name, LowestLoadAverage by load,
// LongestIdleTime by idle time (longest first), LargestPhysicalMemory by
// memory (largest first).
func SortNodes(nodes []*Node, keys []config.NodeSortKey) {
	slices.SortStableFunc(nodes, func(a, b *Node) int {
		for _, k := range keys {
			var c int
			switch k {
			case config.NodeName:
				c = cmp.Compare(a.Name, b.Name)
			case config.LowestLoadAverage:
				c = cmp.Compare(a.LoadAvg, b.LoadAvg)
			case config.LongestIdleTime:
				c = cmp.Compare(b.IdleSeconds, a.IdleSeconds)
			case config.LargestPhysicalMemory:
				c = cmp.Compare(b.PhysMem, a.PhysMem)
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}
