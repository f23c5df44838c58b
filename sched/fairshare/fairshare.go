// Package fairshare is the FIFO scheduler's fair-share tree: the groups and
// users of sched_priv/resource_group with their shares, the usage each has
// accumulated (persisted in sched_priv/usage) and its decay.
//
// A node's percentage is its parent's percentage times its shares divided
// by the shares of all its siblings; the root has 100%. The most deserving
// user is the one whose usage relative to its percentage is smallest.
package fairshare

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Names of the two predefined groups.
const (
	RootGroup    = "root"
	UnknownGroup = "unknown"
)

// Node is a group or user of the tree.
type Node struct {
	Name     string
	ID       int
	Shares   int
	Parent   *Node
	Children []*Node

	// Usage is the accumulated usage (cput seconds) of the node and its
	// descendants; TempUsage is Usage plus what was charged for jobs
	// started during the current cycle.
	Usage     float64
	TempUsage float64
	// Percent is the node's fraction of the machine, in [0,1].
	Percent float64
}

// Tree is the fair-share hierarchy.
type Tree struct {
	Root    *Node
	Unknown *Node
	byName  map[string]*Node
	// LastDecay is the time usage was last halved.
	LastDecay time.Time
}

// New returns a tree holding only root and unknown (with unknownShares).
func New(unknownShares int) *Tree {
	root := &Node{Name: RootGroup, Percent: 1}
	t := &Tree{Root: root, byName: map[string]*Node{RootGroup: root}}
	t.Unknown = t.add(UnknownGroup, 0, root, unknownShares)
	t.recompute()
	return t
}

func (t *Tree) add(name string, id int, parent *Node, shares int) *Node {
	n := &Node{Name: name, ID: id, Shares: shares, Parent: parent}
	parent.Children = append(parent.Children, n)
	t.byName[name] = n
	return n
}

// Parse reads resource_group lines "<name> <id> <parent> <shares>"; a
// parent must be defined before its members.
func Parse(r io.Reader, unknownShares int) (*Tree, error) {
	t := New(unknownShares)
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 4 {
			return nil, fmt.Errorf("resource_group line %d: want name, id, parent and shares", n)
		}
		id, err1 := strconv.Atoi(f[1])
		shares, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || shares < 0 {
			return nil, fmt.Errorf("resource_group line %d: bad number in %q", n, sc.Text())
		}
		parent, ok := t.byName[f[2]]
		if !ok {
			return nil, fmt.Errorf("resource_group line %d: parent group %q not defined", n, f[2])
		}
		if _, dup := t.byName[f[0]]; dup {
			return nil, fmt.Errorf("resource_group line %d: %q defined twice", n, f[0])
		}
		t.add(f[0], id, parent, shares)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read resource_group: %w", err)
	}
	t.recompute()
	return t, nil
}

// ReadFile parses the resource_group file at path; a missing file gives
// the tree with only root and unknown.
func ReadFile(path string, unknownShares int) (*Tree, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return New(unknownShares), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read resource_group: %w", err)
	}
	defer f.Close()
	return Parse(f, unknownShares)
}

func (t *Tree) recompute() {
	var walk func(n *Node)
	walk = func(n *Node) {
		total := 0
		for _, c := range n.Children {
			total += c.Shares
		}
		for _, c := range n.Children {
			if total > 0 {
				c.Percent = n.Percent * float64(c.Shares) / float64(total)
			} else {
				c.Percent = 0
			}
			walk(c)
		}
	}
	walk(t.Root)
}

// Node returns the node called name, or nil.
func (t *Tree) Node(name string) *Node { return t.byName[name] }

// User returns the leaf of user name; a user not in the tree is added to
// the unknown group with one share.
func (t *Tree) User(name string) *Node {
	if n, ok := t.byName[name]; ok {
		return n
	}
	n := t.add(name, -1, t.Unknown, 1)
	n.Usage, n.TempUsage = 0, 0
	t.recompute()
	return n
}

// Priority is the value fair share orders by: usage relative to the
// node's percentage (smaller is more deserving). A node without shares
// comes last.
func (n *Node) Priority() float64 {
	if n.Percent <= 0 {
		return math.Inf(1)
	}
	return n.TempUsage / n.Percent
}

// StartCycle resets every node's temporary usage to its usage.
func (t *Tree) StartCycle() {
	for _, n := range t.byName {
		n.TempUsage = n.Usage
	}
}

// Charge adds the expected usage of a job started this cycle to the
// temporary usage of the user's node and its ancestors.
func (t *Tree) Charge(user string, amount float64) {
	for n := t.User(user); n != nil; n = n.Parent {
		n.TempUsage += amount
	}
}

// AddUsage adds real usage to the user's node and its ancestors.
func (t *Tree) AddUsage(user string, amount float64) {
	for n := t.User(user); n != nil; n = n.Parent {
		n.Usage += amount
		n.TempUsage += amount
	}
}

// Decay halves all usage once for each full halfLife elapsed since the
// last decay, and returns the number of halvings.
func (t *Tree) Decay(now time.Time, halfLife time.Duration) int {
	if halfLife <= 0 {
		return 0
	}
	if t.LastDecay.IsZero() {
		t.LastDecay = now
		return 0
	}
	k := int(now.Sub(t.LastDecay) / halfLife)
	if k <= 0 {
		return 0
	}
	f := math.Pow(0.5, float64(k))
	for _, n := range t.byName {
		n.Usage *= f
		n.TempUsage *= f
	}
	t.LastDecay = t.LastDecay.Add(time.Duration(k) * halfLife)
	return k
}

// WriteUsage saves the usage of every node with usage, one "name usage"
// line each, preceded by the last decay time.
func (t *Tree) WriteUsage(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "#decay %d\n", t.LastDecay.Unix())
	names := make([]string, 0, len(t.byName))
	for name := range t.byName {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := t.byName[name]
		if n == t.Root || n.Children != nil {
			continue // groups are the sum of their members
		}
		if n.Usage != 0 {
			fmt.Fprintf(bw, "%s %s\n", name, strconv.FormatFloat(n.Usage, 'g', -1, 64))
		}
	}
	return bw.Flush()
}

// ReadUsage loads usage written by WriteUsage, adding each leaf's usage to
// its ancestors. Unknown names are added under the unknown group.
func (t *Tree) ReadUsage(r io.Reader) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "#decay "); ok {
			sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil && sec > 0 {
				t.LastDecay = time.Unix(sec, 0)
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		u, err := strconv.ParseFloat(f[1], 64)
		if err != nil || math.IsNaN(u) || math.IsInf(u, 0) || u < 0 {
			return fmt.Errorf("usage file: bad usage %q", line)
		}
		n := t.byName[f[0]]
		if n != nil && n.Children != nil {
			continue
		}
		t.AddUsage(f[0], u)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read usage: %w", err)
	}
	return nil
}

// SaveUsageFile writes the usage file at path atomically.
func (t *Tree) SaveUsageFile(path string) error {
	tmp := path + ".new"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("save usage: %w", err)
	}
	if err := t.WriteUsage(f); err != nil {
		f.Close()
		return fmt.Errorf("save usage: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save usage: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save usage: %w", err)
	}
	return nil
}

// LoadUsageFile reads the usage file at path; a missing file is no error.
func (t *Tree) LoadUsageFile(path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load usage: %w", err)
	}
	defer f.Close()
	return t.ReadUsage(f)
}
