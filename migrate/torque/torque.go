// Package torque reads the state a TORQUE 2.5 pbs_server leaves in its
// server_priv directory (spec 13): the binary serverdb, queue, job (.JB,
// .TA) and array (.AR) files in the native x86_64 layout, the job scripts
// (.SC), and the text files nodes, node_status, node_note and the ACL
// files of acl_svr/ and of the queue ACL directories.
//
// The package decodes; it does not interpret. Attribute values are
// returned in TORQUE's save encoding (spec 13 §2.3), as the files hold
// them, with their record flags. Read stops at the first file it cannot
// decode and names it in the error, so that a caller can refuse to import
// a damaged directory as a whole.
package torque

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopbs/jobfile"
)

// Attr is one attribute record as stored (spec 13 §2): name, resource
// (empty if none), value in save encoding, flags.
type Attr = jobfile.Attr

// Home is a decoded server_priv directory.
type Home struct {
	// Priv is the server_priv directory read.
	Priv string
	// ServerName is the first line of PBS_HOME/server_name, without a
	// port; empty if the file is absent.
	ServerName string
	Server     *ServerDB
	// ServerACLs maps an ACL attribute name (acl_hosts, managers, ...) to
	// the content of its file in acl_svr/: the save encoding, one entry a
	// line.
	ServerACLs map[string]string
	Queues     []*Queue // in name order
	Nodes      []Node   // in the order of the nodes file
	Arrays     []*Array // in file name order
	Jobs       []*Job   // in TORQUE's recovery order (queue_rank, then file name)
}

// Job is a job file with its script.
type Job struct {
	File *jobfile.Job
	// Template is set for an array template (.TA file).
	Template bool
	// Script is the content of <prefix>.SC, nil if there is none (array
	// sub-jobs share their template's script).
	Script []byte
	// Path is the job file read.
	Path string
}

// Queue returns the queue name of the job's fixed part.
func (j *Job) Queue() string { return j.File.Queue }

// Rank returns the job's queue_rank attribute (0 if absent or malformed).
func (j *Job) Rank() int64 {
	v, _ := j.File.Get("queue_rank", "")
	var n int64
	if _, err := fmt.Sscan(v, &n); err != nil {
		return 0
	}
	return n
}

// Read decodes the TORQUE server state under home (the PBS_HOME holding
// server_name and server_priv). Every error names the file at fault.
func Read(home string) (*Home, error) {
	priv := filepath.Join(home, "server_priv")
	st, err := os.Stat(priv)
	if err != nil {
		return nil, fmt.Errorf("torque: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("torque: %s is not a directory", priv)
	}
	h := &Home{Priv: priv}
	if b, err := os.ReadFile(filepath.Join(home, "server_name")); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		name, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		h.ServerName = name
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("torque: %w", err)
	}
	path := filepath.Join(priv, "serverdb")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("torque: %w", err)
	}
	if h.Server, err = ParseServerDB(b); err != nil {
		return nil, fmt.Errorf("torque: %s: %w", path, err)
	}
	if h.ServerACLs, err = readACLDir(filepath.Join(priv, "acl_svr")); err != nil {
		return nil, err
	}
	if err := h.readQueues(priv); err != nil {
		return nil, err
	}
	if err := h.readNodes(priv); err != nil {
		return nil, err
	}
	if err := h.readArrays(filepath.Join(priv, "arrays")); err != nil {
		return nil, err
	}
	if err := h.readJobs(filepath.Join(priv, "jobs")); err != nil {
		return nil, err
	}
	return h, nil
}

// dirFiles returns the names of the regular files of dir in name order
// (none if dir does not exist).
func dirFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("torque: %w", err)
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// ignored reports whether a file name in a server_priv directory is a
// leftover of an interrupted write (spec 13 §1.3) rather than data.
func ignored(name string) bool {
	return strings.HasSuffix(name, ".new") || strings.HasPrefix(name, ".")
}

func (h *Home) readQueues(priv string) error {
	dir := filepath.Join(priv, "queues")
	names, err := dirFiles(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		if ignored(name) {
			continue
		}
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("torque: %w", err)
		}
		q, err := ParseQueue(b)
		if err != nil {
			return fmt.Errorf("torque: %s: %w", path, err)
		}
		q.Name = name // the file name is authoritative (spec 13 §4)
		q.ACLs = map[string]string{}
		for _, kind := range QueueACLDirs {
			p := filepath.Join(priv, kind, name)
			entries, ok, err := readACLFile(p)
			if err != nil {
				return err
			}
			if ok {
				q.ACLs[kind] = entries
			}
		}
		h.Queues = append(h.Queues, q)
	}
	return nil
}

func (h *Home) readArrays(dir string) error {
	names, err := dirFiles(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".AR") {
			continue
		}
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("torque: %w", err)
		}
		a, err := ParseArray(b)
		if err != nil {
			return fmt.Errorf("torque: %s: %w", path, err)
		}
		if want := strings.TrimSuffix(name, ".AR"); a.Prefix != want {
			return fmt.Errorf("torque: %s: file prefix %q does not match the file name", path, a.Prefix)
		}
		h.Arrays = append(h.Arrays, a)
	}
	return nil
}

func (h *Home) readJobs(dir string) error {
	names, err := dirFiles(dir)
	if err != nil {
		return err
	}
	scripts := map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, ".SC") {
			scripts[strings.TrimSuffix(name, ".SC")] = true
		}
	}
	for _, name := range names {
		ext := filepath.Ext(name)
		if ext != ".JB" && ext != ".TA" {
			continue // .SC are read with their job; .BD, .JC are leftovers
		}
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("torque: %w", err)
		}
		f, err := jobfile.Parse(b)
		if err != nil {
			return fmt.Errorf("torque: %s: %w", path, err)
		}
		prefix := strings.TrimSuffix(name, ext)
		if f.Prefix != prefix {
			return fmt.Errorf("torque: %s: file prefix %q does not match the file name", path, f.Prefix)
		}
		if f.ID == "" {
			return fmt.Errorf("torque: %s: no job id", path)
		}
		j := &Job{File: f, Template: ext == ".TA", Path: path}
		if scripts[prefix] {
			if j.Script, err = os.ReadFile(filepath.Join(dir, prefix+".SC")); err != nil {
				return fmt.Errorf("torque: %w", err)
			}
		}
		h.Jobs = append(h.Jobs, j)
	}
	sort.SliceStable(h.Jobs, func(a, b int) bool { return h.Jobs[a].Rank() < h.Jobs[b].Rank() })
	return nil
}
