package server

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		for _, name := range expandNodeName(fields[0]) {
			ts := false
			if strings.HasSuffix(name, ":ts") {
				name, ts = strings.TrimSuffix(name, ":ts"), true
			}
			if s.nodeByName[name] != nil || name == "" {
				continue
			}
			n := &Node{name: name, np: 1, timeShared: ts, order: s.orderSeq}
			s.orderSeq++
			var props []string
			for _, tok := range fields[1:] {
				k, v, ok := strings.Cut(tok, "=")
				switch {
				case ok && k == "np":
					if x, err := strconv.Atoi(v); err == nil && x > 0 {
						n.np = x
					}
				case ok && k == "gpus":
					n.attrs.set(naGpus, v)
				case ok:
					if idx := nodeDefs.find(k); idx >= 0 {
						n.attrs.set(idx, v)
					}
				default:
					props = append(props, tok)
				}
			}
			if len(props) > 0 {
				n.attrs.set(naProperties, encodeArst(props))
			}
			s.nodes = append(s.nodes, n)
			s.nodeByName[name] = n
			ops = append(ops, store.Put(store.Nodes, n.name, encodeNode(n)))
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

// writeNodesFile rewrites server_priv/nodes from the node table (through
// nodes.new and a rename). Called with the lock held.
func (s *Server) writeNodesFile() error {
	var b strings.Builder
	for _, n := range s.nodes {
		b.WriteString(n.name)
		if n.timeShared {
			b.WriteString(":ts")
		}
		if n.np > 1 {
			fmt.Fprintf(&b, " np=%d", n.np)
		}
		if g, _ := strconv.Atoi(n.attrs.get(naGpus)); g > 0 {
			fmt.Fprintf(&b, " gpus=%d", g)
		}
		for _, p := range parseArst(n.attrs.get(naProperties)) {
			b.WriteString(" " + p)
		}
		b.WriteByte('\n')
	}
	tmp := s.nodesFile() + ".new"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, s.nodesFile())
}
