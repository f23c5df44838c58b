package torque

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Node is one node of server_priv/nodes with its saved state and note
// (spec 13 §9).
type Node struct {
	// Line is the node's line of the nodes file as written (name, np=,
	// gpus=, properties), the format GoPBS's nodes file shares.
	Line string
	Name string
	// State holds the OFFLINE (1) and RESERVE (8) bits of node_status.
	State int
	Note  string
}

// Node state bits of node_status (spec 13 §9).
const (
	NodeOffline = 1
	NodeReserve = 8
)

func (h *Home) readNodes(priv string) error {
	lines, err := readLines(filepath.Join(priv, "nodes"))
	if err != nil {
		return err
	}
	byName := map[string]int{}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		name := strings.TrimSuffix(f[0], ":ts")
		byName[name] = len(h.Nodes)
		h.Nodes = append(h.Nodes, Node{Line: strings.Join(f, " "), Name: name})
	}
	path := filepath.Join(priv, "node_status")
	lines, err = readLines(path)
	if err != nil {
		return err
	}
	for i, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return fmt.Errorf("torque: %s:%d: want \"<node> <state>\", have %q", path, i+1, line)
		}
		st, err := strconv.Atoi(f[1])
		if err != nil || st < 0 || st&^(NodeOffline|NodeReserve) != 0 {
			return fmt.Errorf("torque: %s:%d: bad node state %q", path, i+1, f[1])
		}
		if k, ok := byName[f[0]]; ok {
			h.Nodes[k].State = st
		}
	}
	path = filepath.Join(priv, "node_note")
	if lines, err = readLines(path); err != nil {
		return err
	}
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, note, ok := strings.Cut(line, " ")
		if !ok || name == "" {
			return fmt.Errorf("torque: %s:%d: want \"<node> <note>\", have %q", path, i+1, line)
		}
		if k, ok := byName[name]; ok {
			h.Nodes[k].Note = note
		}
	}
	return nil
}

// readLines returns the lines of a text file (none if it is absent).
func readLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("torque: %w", err)
	}
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}

// readACLFile reads an ACL or list file (spec 13 §5): the attribute's
// save encoding, one entry a line. ok is false when the file is absent
// (the attribute is unset).
func readACLFile(path string) (text string, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("torque: %w", err)
	}
	return string(b), true, nil
}

// readACLDir reads the ACL files of acl_svr/, keyed by file name.
func readACLDir(dir string) (map[string]string, error) {
	names, err := dirFiles(dir)
	if err != nil {
		return nil, err
	}
	acls := map[string]string{}
	for _, name := range names {
		if ignored(name) {
			continue
		}
		text, _, err := readACLFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		acls[name] = text
	}
	return acls, nil
}
