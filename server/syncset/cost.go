package syncset

import (
	"math"
	"strconv"
	"strings"

	pbsattr "gopbs/attr"
)

// Resource is one resource a job requests (a Resource_List entry): its
// name, value type and canonical text.
type Resource struct {
	Name  string
	Type  pbsattr.Type
	Value string
}

// Prices are a server's resource costs: resources_cost (cost per unit of
// a resource, by resource name) and system_cost (a surcharge on every
// job).
type Prices struct {
	PerUnit map[string]int64
	System  int64
}

// Cost is the resource cost of a job requesting req (seed 001, Resource
// Cost): the sum over the requested resources that have a price of the
// amount times the price, plus the system surcharge. Amounts are sizes in
// megabytes (rounded up, "to keep the number from becoming too large"),
// times in seconds, numbers as they are, and for a node specification
// the number of nodes it asks for. Values that are none of these count
// nothing. The sum saturates instead of overflowing.
func (p Prices) Cost(req []Resource) int64 {
	total := p.System
	for _, r := range req {
		price, ok := p.PerUnit[r.Name]
		if !ok || price == 0 {
			continue
		}
		total = satAdd(total, satMul(Amount(r), price))
	}
	return total
}

// Amount is the quantity a resource value stands for in a cost: see Cost.
func Amount(r Resource) int64 {
	switch r.Type {
	case pbsattr.TypeSize:
		sz, err := pbsattr.ParseSize(r.Value)
		if err != nil {
			return 0
		}
		b := sz.Bytes()
		mb := b >> 20
		if b&(1<<20-1) != 0 {
			mb++
		}
		return int64(min(mb, math.MaxInt64))
	case pbsattr.TypeTime:
		secs, err := pbsattr.ParseTime(r.Value)
		if err != nil {
			return 0
		}
		return secs
	case pbsattr.TypeNodeSpec:
		return nodeCount(r.Value)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(r.Value), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// nodeCount counts the nodes a node specification asks for: each
// '+'-separated part is "N[:props]" (N nodes) or a node name or property
// (one node); a "#..." global suffix is ignored.
func nodeCount(spec string) int64 {
	spec, _, _ = strings.Cut(spec, "#")
	var n int64
	for _, part := range strings.Split(spec, "+") {
		first, _, _ := strings.Cut(part, ":")
		if first == "" {
			continue
		}
		if k, err := strconv.ParseInt(first, 10, 64); err == nil && k > 0 {
			n = satAdd(n, k)
		} else {
			n = satAdd(n, 1)
		}
	}
	return n
}

// ParsePrice reads one resources_cost value: an integer (a size or time
// value as the server may have canonicalised it counts its number).
func ParsePrice(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	end := 0
	for end < len(v) && (v[end] >= '0' && v[end] <= '9' || end == 0 && v[end] == '-') {
		end++
	}
	n, err := strconv.ParseInt(v[:end], 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

func satAdd(a, b int64) int64 {
	s := a + b
	if a > 0 && b > 0 && s < 0 {
		return math.MaxInt64
	}
	if a < 0 && b < 0 && s >= 0 {
		return math.MinInt64
	}
	return s
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		if (a > 0) == (b > 0) {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return p
}
