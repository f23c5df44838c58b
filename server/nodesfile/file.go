package server

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	pbsattr "gopbs/attr"
	"gopbs/server/state"
	"gopbs/server/store"
)

func (s *Server) nodesFile() string { return filepath.Join(s.cfg.Home, "server_priv", "nodes") }

// loadNodesFile adds the nodes listed in server_priv/nodes that the store
// does not know (an administrator may write the file before starting the
// server, as with TORQUE).
func (s *Server) loadNodesFile() error {
	f, err := os.Open(s.nodesFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pbs_server: nodes file: %w", err)
	}
	defer f.Close()
	var ops []store.Op
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for _, n := range s.parseNodeLine(sc.Text()) {
			s.nodes = append(s.nodes, n)
			s.nodeByName[n.Name] = n
			ops = append(ops, state.SaveNode(n))
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("pbs_server: nodes file: %w", err)
	}
	if len(ops) > 0 {
		return s.store.Apply(ops...)
	}
	return nil
}

// parseNodeLine returns the nodes of one line of server_priv/nodes that
// the node table does not hold yet (none for a blank or comment line),
// numbered in creation order from s.orderSeq.
func (s *Server) parseNodeLine(line string) []*state.Node {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return nil
	}
	var nodes []*state.Node
	fields := strings.Fields(line)
	for _, name := range expandNodeName(fields[0]) {
		ts := false
		if strings.HasSuffix(name, ":ts") {
			name, ts = strings.TrimSuffix(name, ":ts"), true
		}
		if s.nodeByName[name] != nil || name == "" {
			continue
		}
		// not free until its MOM reports (spec 12 §9, TORQUE)
		n := &state.Node{Name: name, NP: 1, State: state.NodeStateUnreported, TimeShared: ts, Order: s.orderSeq}
		s.orderSeq++
		var props []string
		for _, tok := range fields[1:] {
			k, v, ok := strings.Cut(tok, "=")
			switch {
			case ok && k == "np":
				if x, err := strconv.Atoi(v); err == nil && x > 0 {
					n.NP = x
				}
			case ok && k == "gpus":
				n.Attrs.Set(pbsattr.NodeGPUs, v)
			case ok:
				if idx := state.NodeDefs.Find(k); idx >= 0 {
					n.Attrs.Set(idx, v)
				}
			default:
				props = append(props, tok)
			}
		}
		if len(props) > 0 {
			n.Attrs.Set(pbsattr.NodeProperties, state.EncodeArst(props))
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// expandNodeName expands "n[01-10]" ranges.
func expandNodeName(name string) []string {
	i := strings.IndexByte(name, '[')
	j := strings.IndexByte(name, ']')
	if i < 0 || j < i {
		return []string{name}
	}
	lo, hi, ok := strings.Cut(name[i+1:j], "-")
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if !ok || err1 != nil || err2 != nil || b < a || b-a > 100000 {
		return []string{name}
	}
	var out []string
	for k := a; k <= b; k++ {
		out = append(out, name[:i]+fmt.Sprintf("%0*d", len(lo), k)+name[j+1:])
	}
	return out
}

// nodeLine is node n's line in server_priv/nodes (spec 13): the name
// (":ts" for a time-shared node), np when above 1, gpus when set, then
// the properties.
func nodeLine(n *state.Node) string {
	var b strings.Builder
	b.WriteString(n.Name)
	if n.TimeShared {
		b.WriteString(":ts")
	}
	if n.NP > 1 {
		b.WriteString(" np=" + strconv.Itoa(n.NP))
	}
	if g, _ := strconv.Atoi(n.Attrs.Get(pbsattr.NodeGPUs)); g > 0 {
		b.WriteString(" gpus=" + strconv.Itoa(g))
	}
	for _, p := range state.ParseArst(n.Attrs.Get(pbsattr.NodeProperties)) {
		b.WriteString(" " + p)
	}
	return b.String()
}

// nodeLines returns the lines of server_priv/nodes for the node table.
// Called with the lock held.
func (s *Server) nodeLines() []string {
	lines := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		lines[i] = nodeLine(n)
	}
	return lines
}

// nodeCreated records in server_priv/nodes the node just appended to the
// node table; nodesChanged records any other change of the table. Both
// are called with the lock held, in the order of the changes, and return
// a function that waits, without the lock, until the file holding the
// change is on disk.
func (s *Server) nodeCreated(n *state.Node) func() error {
	return s.run.nodesFile.add(s.nodeLines, nodeLine(n))
}

func (s *Server) nodesChanged() func() error {
	return s.run.nodesFile.replace(s.nodeLines())
}

// nodesFile keeps server_priv/nodes in step with the node table without
// rewriting it for every created node: a created node is one line
// appended to the file (the table's order is the file's, and a node is
// created at the end), any other change rewrites the whole file through
// nodes.new and a rename. Changes are queued in the table's order and
// written by the first of their waiters, as many as are queued at once
// (group commit), each write synced before its waiters return, so that
// a node whose creation was acknowledged is in the file after a crash.
type nodesFile struct {
	path string

	mu       sync.Mutex
	idle     sync.Cond // signalled when a write ends
	loaded   bool      // lines holds the table (set by the first change)
	lines    []string  // the file's lines once every queued change is written
	onDisk   int       // lines[:onDisk] are the file's content, unless rewrite
	rewrite  bool      // the file must be written whole
	queue    []*nodesFileChange
	flushing bool
}

// nodesFileChange is one queued change; its fields are guarded by
// nodesFile.mu.
type nodesFileChange struct {
	done bool
	err  error
}

func newNodesFile(path string) *nodesFile {
	f := &nodesFile{path: path}
	f.idle.L = &f.mu
	return f
}

// load starts the model from the node table's lines, of which the file
// should hold the first onDisk. It is appended to only if it holds
// exactly those; otherwise (no file, or an administrator's file with
// comments or ranges) the first write rewrites it.
func (f *nodesFile) load(lines []string, onDisk int) {
	f.lines, f.onDisk, f.rewrite, f.loaded = lines, onDisk, true, true
	if b, err := os.ReadFile(f.path); err == nil && string(b) == joinLines(lines[:onDisk]) {
		f.rewrite = false
	}
}

// add queues the creation of the node of line, the last of the table's
// lines (all returns them).
func (f *nodesFile) add(all func() []string, line string) func() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.loaded {
		lines := all()
		f.load(lines, max(len(lines)-1, 0))
	} else {
		f.lines = append(f.lines, line)
	}
	return f.enqueue()
}

// replace queues a change that leaves the table's lines as lines.
func (f *nodesFile) replace(lines []string) func() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loaded, f.lines, f.rewrite = true, lines, true
	return f.enqueue()
}

// enqueue queues a change. Called with f.mu held.
func (f *nodesFile) enqueue() func() error {
	c := &nodesFileChange{}
	f.queue = append(f.queue, c)
	return func() error { return f.wait(c) }
}

// wait returns once change c is written, writing it (and whatever else
// is queued) itself unless another waiter is writing.
func (f *nodesFile) wait(c *nodesFileChange) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for !c.done {
		if f.flushing {
			f.idle.Wait()
			continue
		}
		f.flush()
	}
	return c.err
}

// flush writes every queued change. Called with f.mu held, which it
// releases while writing.
func (f *nodesFile) flush() {
	batch := f.queue
	f.queue = nil
	f.flushing = true
	whole := f.rewrite
	// Lines are only ever appended to f.lines or the slice replaced, so
	// this view stays valid while the lock is released.
	lines, onDisk := f.lines[:len(f.lines):len(f.lines)], f.onDisk
	f.rewrite = false // a replace while writing sets it again
	f.mu.Unlock()
	var err error
	if !whole {
		err = appendFileSynced(f.path, joinLines(lines[onDisk:]))
	}
	if whole || err != nil {
		// An append that failed (the file was removed, say) may have
		// left part of its data: write the file whole.
		err = writeFileSynced(f.path, joinLines(lines))
	}
	f.mu.Lock()
	f.flushing = false
	switch {
	case err != nil:
		f.rewrite = true // the file's content is unknown now
	case !f.rewrite:
		f.onDisk = len(lines)
	}
	for _, c := range batch {
		c.done, c.err = true, err
	}
	f.idle.Broadcast()
}

func joinLines(lines []string) string {
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	var b strings.Builder
	b.Grow(size)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// writeFileSynced replaces path with data through path.new and a rename,
// syncing the file and then the directory.
func writeFileSynced(path, data string) error {
	tmp := path + ".new"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("nodes file: %w", err)
	}
	err = writeSyncClose(f, data)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("nodes file: %w", err)
	}
	return nil
}

// appendFileSynced appends data to the existing file path and syncs it.
func appendFileSynced(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("nodes file: %w", err)
	}
	if err := writeSyncClose(f, data); err != nil {
		return fmt.Errorf("nodes file: %w", err)
	}
	return nil
}

// writeSyncClose writes data to f, syncs and closes it, and returns the
// first error.
func writeSyncClose(f *os.File, data string) error {
	_, err := f.WriteString(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
