// Package fakeserver is a small stand-in for pbs_server's side of the
// scheduler link, for tests: it holds queues, nodes and jobs, connects to
// a scheduler, sends the 4-byte command and answers the scheduler's batch
// requests (StatusServer, StatusNode, StatusQue, SelStat, ResourceQuery,
// ModifyJob, RunJob, DeleteJob, MoveJob) until the scheduler closes.
package fakeserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/sched/placement"
	"gopbs/sched/world"
)

// Queue is a queue of the fake server.
type Queue struct {
	Name  string
	Attrs batchreq.AttrList // beyond queue_type/started
	Type  string            // "Execution" (default) or "Route"
}

// Node is a node of the fake server.
type Node struct {
	Name  string
	NP    int
	State string // "free" by default
	jobs  []string
}

// Job is a job of the fake server.
type Job struct {
	ID        string
	Queue     string
	State     string // "Q" by default
	User      string
	Group     string
	Priority  int
	QTime     time.Time
	Comment   string
	Resources map[string]string // Resource_List
	hosts     []string
}

// Server is the fake server. Its fields may be changed between cycles.
type Server struct {
	mu       sync.Mutex
	Name     string
	Attrs    batchreq.AttrList
	Queues   []*Queue
	Nodes    []*Node
	Jobs     []*Job
	Requests []string // request type names in order
	Started  []string // job ids in RunJob order
	Deleted  []string
	Moved    []string // "id queue" in MoveJob order

	pool *placement.Pool // node model answering ResourceQuery and allocating for RunJob, rebuilt after changes
}

// New returns an empty server called name.
func New(name string) *Server { return &Server{Name: name} }

// RequestsSoFar returns a copy of Requests that may be taken while a
// cycle is being served.
func (s *Server) RequestsSoFar() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.Requests)
}

// AddJob adds a queued job.
func (s *Server) AddJob(j *Job) *Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.State == "" {
		j.State = "Q"
	}
	if j.Group == "" {
		j.Group = j.User
	}
	if j.QTime.IsZero() {
		j.QTime = time.Now()
	}
	s.Jobs = append(s.Jobs, j)
	return j
}

// Job returns the job with id.
func (s *Server) Job(id string) *Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.Jobs {
		if j.ID == id {
			return j
		}
	}
	return nil
}

// Finish ends a running job: it is removed and its VPs freed.
func (s *Server) Finish(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, j := range s.Jobs {
		if j.ID != id {
			continue
		}
		for _, n := range s.Nodes {
			var keep []string
			for _, e := range n.jobs {
				if e != id {
					keep = append(keep, e)
				}
			}
			n.jobs = keep
		}
		s.Jobs = append(s.Jobs[:i], s.Jobs[i+1:]...)
		s.pool = nil
		return
	}
}

// Trigger connects to the scheduler at addr from an ordinary port, sends
// cmd and serves its requests until it closes the connection.
func (s *Server) Trigger(addr string, cmd int) error {
	s.mu.Lock()
	s.pool = nil // nodes may have been edited directly
	s.mu.Unlock()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if err := batchreq.WriteSchedCommand(c, cmd); err != nil {
		return err
	}
	r := dis.NewReader(c)
	for {
		req, err := batchreq.ReadServerRequest(r)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, dis.ErrEOF) {
				return nil
			}
			return fmt.Errorf("fake server: %w", err)
		}
		rep := s.handle(req)
		if _, err := c.Write(rep.Append(nil)); err != nil {
			return err
		}
	}
}

func attr(name, value string) batchreq.Attr { return batchreq.NewAttr(name, value) }

func (s *Server) worldNodes() []*world.Node {
	var out []*world.Node
	for _, n := range s.Nodes {
		st := n.State
		if st == "" {
			st = "free"
		}
		out = append(out, &world.Node{Name: n.Name, NP: n.NP, State: world.ParseNodeState(st), UsedSlots: len(n.jobs)})
	}
	return out
}

func (s *Server) handle(req *batchreq.Request) *batchreq.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Requests = append(s.Requests, strconv.Itoa(req.Header.Type))
	status := func(objs ...batchreq.StatusObject) *batchreq.Reply {
		return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status, Status: objs}
	}
	switch body := req.Body.(type) {
	case *batchreq.StatusReq:
		switch req.Header.Type {
		case batchreq.PBS_BATCH_StatusSvr:
			return status(batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_SERVER, Name: s.Name, Attrs: s.Attrs})
		case batchreq.PBS_BATCH_StatusNode:
			var objs []batchreq.StatusObject
			for _, n := range s.Nodes {
				st := n.State
				if st == "" {
					st = "free"
					if len(n.jobs) >= n.NP {
						st = "job-exclusive"
					}
				}
				var jobs []string
				for i, j := range n.jobs {
					jobs = append(jobs, fmt.Sprintf("%d/%s", i, j))
				}
				objs = append(objs, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_NODE, Name: n.Name, Attrs: batchreq.AttrList{
					attr("state", st), attr("np", strconv.Itoa(n.NP)), attr("ntype", "cluster"), attr("jobs", strings.Join(jobs, ", ")),
				}})
			}
			return status(objs...)
		case batchreq.PBS_BATCH_StatusQue:
			var objs []batchreq.StatusObject
			for _, q := range s.Queues {
				t := q.Type
				if t == "" {
					t = "Execution"
				}
				attrs := append(batchreq.AttrList{attr("queue_type", t)}, q.Attrs...)
				attrs = append(attrs, attr("enabled", "True"), attr("started", "True"))
				objs = append(objs, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_QUEUE, Name: q.Name, Attrs: attrs})
			}
			return status(objs...)
		}
	case *batchreq.Select:
		dest, _ := body.Attrs.Get("destination")
		var objs []batchreq.StatusObject
		for _, j := range s.Jobs {
			if j.Queue != dest {
				continue
			}
			attrs := batchreq.AttrList{attr("job_state", j.State), attr("queue", j.Queue),
				attr("Priority", strconv.Itoa(j.Priority)), attr("qtime", strconv.FormatInt(j.QTime.Unix(), 10)),
				attr("euser", j.User), attr("egroup", j.Group)}
			if j.Comment != "" {
				attrs = append(attrs, attr("comment", j.Comment))
			}
			for k, v := range j.Resources {
				attrs = append(attrs, batchreq.NewResourceAttr("Resource_List", k, v))
			}
			objs = append(objs, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_JOB, Name: j.ID, Attrs: attrs})
		}
		return status(objs...)
	case *batchreq.Resc:
		if s.pool == nil {
			s.pool = placement.NewPool(s.worldNodes())
		}
		pool := s.pool
		var avail []int
		for _, q := range body.Queries {
			spec, err := pool.Parse(strings.TrimPrefix(q, "nodes="))
			if err != nil {
				return batchreq.ErrorReply(batchreq.PBSE_UNKNODEATR, "", "")
			}
			avail = append(avail, int(pool.Query(spec)))
		}
		n := len(avail)
		return &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_RescQuery,
			Resc: batchreq.RescQueryReply{Avail: avail, Alloc: make([]int, n), Resvd: make([]int, n), Down: make([]int, n)}}
	case *batchreq.Manage:
		var job *Job
		idx := -1
		for i, j := range s.Jobs {
			if j.ID == body.ObjName {
				job, idx = j, i
			}
		}
		if job == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, "", "")
		}
		if req.Header.Type == batchreq.PBS_BATCH_DeleteJob {
			s.Deleted = append(s.Deleted, job.ID)
			s.Jobs = append(s.Jobs[:idx], s.Jobs[idx+1:]...)
			return batchreq.NullReply()
		}
		if v, ok := body.Attrs.Get("comment"); ok {
			job.Comment = v
		}
		return batchreq.NullReply()
	case *batchreq.MoveJob:
		if req.Header.Type != batchreq.PBS_BATCH_MoveJob {
			break
		}
		for _, j := range s.Jobs {
			if j.ID == body.JobID {
				j.Queue = body.Destination
				s.Moved = append(s.Moved, j.ID+" "+body.Destination)
				return batchreq.NullReply()
			}
		}
		return batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, "", "")
	case *batchreq.RunJob:
		job := (*Job)(nil)
		for _, j := range s.Jobs {
			if j.ID == body.JobID {
				job = j
			}
		}
		if job == nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKJOBID, "", "")
		}
		spec := job.Resources["nodes"]
		if spec == "" {
			spec = "1"
		}
		if s.pool == nil {
			s.pool = placement.NewPool(s.worldNodes())
		}
		pool := s.pool
		sp, err := pool.Parse(spec)
		if err != nil {
			return batchreq.ErrorReply(batchreq.PBSE_UNKNODEATR, "", "")
		}
		names, ok := pool.Allocate(sp)
		if !ok {
			return batchreq.ErrorReply(batchreq.PBSE_RESCUNAV, "", "")
		}
		k := 0
		for _, e := range sp.Elements {
			for c := 0; c < e.Count; c++ {
				for _, n := range s.Nodes {
					if n.Name == names[k] {
						for v := 0; v < e.PPN; v++ {
							n.jobs = append(n.jobs, job.ID)
						}
					}
				}
				k++
			}
		}
		job.State, job.hosts = "R", names // the pool has allocated them too
		s.Started = append(s.Started, job.ID)
		return batchreq.NullReply()
	}
	return batchreq.ErrorReply(batchreq.PBSE_UNKREQ, "", "")
}
