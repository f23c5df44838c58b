package attr_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gopbs/attr"
	"gopbs/batchreq"
	"gopbs/dis"
	"gopbs/internal/capture"
)

// exchange is one request with the reply it got.
type exchange struct {
	where string
	req   *batchreq.Request
	rep   *batchreq.Reply
}

var loadExchanges = sync.OnceValues(func() ([]exchange, error) {
	dir, ok := capture.SharedDir()
	if !ok {
		return nil, errNoCaptures
	}
	files, err := capture.PcapFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errNoCaptures
	}
	var out []exchange
	for _, f := range files {
		c, err := capture.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, conn := range c.Conns {
			if conn.MissingC2S != 0 || conn.MissingS2C != 0 {
				continue
			}
			var reqs, reps []byte
			readReq := batchreq.ReadServerRequest
			switch conn.Server.Port() {
			case batchreq.PBS_BATCH_SERVICE_PORT:
				reqs, reps = conn.Stream(true), conn.Stream(false)
			case batchreq.PBS_MOM_SERVICE_PORT:
				reqs, reps = conn.Stream(true), conn.Stream(false)
				readReq = batchreq.ReadRequest
			case batchreq.PBS_SCHEDULER_SERVICE_PORT:
				reqs, reps = conn.Stream(false), conn.Stream(true)
				if len(reps) < 4 {
					continue
				}
				reps = reps[4:]
			default:
				continue
			}
			where := fmt.Sprintf("%s frame %d", filepath.Base(f), conn.FirstFrame)
			rq := readAll(reqs, func(r *dis.Reader) (*batchreq.Request, error) { return readReq(r) })
			rp := readAll(reps, batchreq.ReadReply)
			var paired []*batchreq.Request
			for _, q := range rq {
				if q.Type != batchreq.PBS_BATCH_Disconnect {
					paired = append(paired, q)
				}
			}
			for k, q := range paired {
				var p *batchreq.Reply
				if k < len(rp) {
					p = rp[k]
				}
				out = append(out, exchange{where: where, req: q, rep: p})
			}
		}
	}
	return out, nil
})

var errNoCaptures = errors.New("../shared/captures not available")

// captureExchanges returns every request/reply pair of the batch
// connections to pbs_server (clients, MOM, scheduler) and to pbs_mom.
func captureExchanges(t *testing.T) []exchange {
	t.Helper()
	x, err := loadExchanges()
	if err == errNoCaptures {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// accessOf returns the permissions the capture cluster gave a request's
// user: root on the server host is manager and operator, the daemons use
// privileged connections.
func accessOf(user string) attr.Access {
	switch user {
	case "root":
		return attr.AccessUser | attr.AccessOper | attr.AccessMgr
	case "Scheduler", "pbs_mom", "PBS_Server":
		return attr.AccessPrivileged
	}
	return attr.AccessUser
}

func readAll[T any](stream []byte, read func(*dis.Reader) (T, error)) []T {
	r := dis.NewReader(bytes.NewReader(stream))
	var out []T
	for r.Offset() < int64(len(stream)) {
		m, err := read(r)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				break
			}
			break
		}
		out = append(out, m)
	}
	return out
}

func tableFor(objType int) *attr.Table {
	switch objType {
	case batchreq.MGR_OBJ_SERVER:
		return attr.ServerTable()
	case batchreq.MGR_OBJ_QUEUE:
		return attr.QueueTable()
	case batchreq.MGR_OBJ_JOB:
		return attr.JobTable()
	case batchreq.MGR_OBJ_NODE:
		return attr.NodeTable()
	}
	return nil
}

func isPseudo(a batchreq.Attr) bool { return a.Name == "Walltime" && a.Resource == "Remaining" }

// TestCaptureStatusReplies rebuilds every object of every Status reply
// pbs_server sent in the captures from its attribute list and requires the
// Set to encode exactly the same list: same entries, same order, same text.
func TestCaptureStatusReplies(t *testing.T) {
	objects, values := 0, 0
	for _, x := range captureExchanges(t) {
		if x.rep == nil || x.rep.Choice != batchreq.BATCH_REPLY_CHOICE_Status {
			continue
		}
		if x.req.Header.User == "PBS_Server" {
			continue // a MOM's reply to the server's poll: MOM's own order
		}
		var wanted batchreq.AttrList
		if b, ok := x.req.Body.(*batchreq.StatusReq); ok {
			wanted = b.Attrs
		}
		for _, obj := range x.rep.Status {
			tab := tableFor(obj.ObjType)
			if tab == nil {
				t.Errorf("%s: object %q of type %d", x.where, obj.Name, obj.ObjType)
				continue
			}
			s := attr.NewSet(tab)
			var pseudo []batchreq.Attr
			for _, a := range obj.Attrs {
				if isPseudo(a) {
					pseudo = append(pseudo, a)
					continue
				}
				if err := s.Load(a.Name, a.Resource, a.HasResource, a.Value); err != nil {
					t.Errorf("%s: %s: decode %s: %v", x.where, obj.Name, a.FullName(), err)
				}
				values++
			}
			o := &attr.EncodeOptions{All: true, After: func(dst []attr.Entry, i int) []attr.Entry {
				if tab.Object == attr.ObjJob && i == attr.JobStartTime {
					for _, p := range pseudo {
						dst = append(dst, attr.Entry{Name: p.Name, Resource: p.Resource, HasResource: true, Value: p.Value})
					}
				}
				return dst
			}}
			var got []attr.Entry
			if len(wanted) == 0 {
				got = s.AppendEntries(nil, o)
			} else {
				o.After = nil
				for _, w := range wanted {
					if d, ok := tab.Lookup(w.Name); ok {
						got = s.AppendAttr(got, d.Index(), o)
					}
				}
			}
			if err := sameEntries(got, obj.Attrs); err != nil {
				t.Errorf("%s: %s (request %d by %s, %d names): %v", x.where, obj.Name, x.req.Type, x.req.User, len(wanted), err)
			}
			// Encoding for the actual requester keeps everything it saw.
			if len(wanted) == 0 {
				o.All = false
				o.Access = accessOf(x.req.User)
				owner, _, _ := strings.Cut(s.Get(attr.JobOwner).Str(), "@")
				o.PrivRead = tab.Object == attr.ObjJob && owner == x.req.User
				if err := sameEntries(s.AppendEntries(nil, o), obj.Attrs); err != nil {
					t.Errorf("%s: %s for %s: %v", x.where, obj.Name, x.req.User, err)
				}
			}
			objects++
		}
	}
	t.Logf("checked %d status objects with %d values", objects, values)
	if objects == 0 {
		t.Error("no status replies found")
	}
}

func sameEntries(got []attr.Entry, want batchreq.AttrList) error {
	var diffs []string
	for k := 0; k < max(len(got), len(want)); k++ {
		var g, w string
		if k < len(got) {
			g = entryString(got[k].Name, got[k].Resource, got[k].Value)
		}
		if k < len(want) {
			w = entryString(want[k].Name, want[k].Resource, want[k].Value)
		}
		if g != w {
			diffs = append(diffs, fmt.Sprintf("entry %d: got %q, want %q", k, g, w))
		}
	}
	if diffs != nil {
		return errors.New(strings.Join(diffs, "; "))
	}
	return nil
}

func entryString(name, resc, value string) string {
	if resc != "" {
		name += "." + resc
	}
	return name + "=" + value
}

// TestCaptureQueueJobToMOM rebuilds each job the server sent to a MOM and
// requires the MOM encoding (MOM-flagged attributes, ModeMOM values,
// nodect left out, op DFLT for defaulted values) to reproduce the list.
func TestCaptureQueueJobToMOM(t *testing.T) {
	n := 0
	for _, x := range captureExchanges(t) {
		b, ok := x.req.Body.(*batchreq.QueueJob)
		if !ok || x.req.User != "PBS_Server" {
			continue
		}
		s := attr.NewSet(attr.JobTable())
		for _, a := range b.Attrs {
			if err := s.Load(a.Name, a.Resource, a.HasResource, a.Value); err != nil {
				t.Fatalf("%s: decode %s: %v", x.where, a.FullName(), err)
			}
			if a.Op == int(attr.OpDflt) {
				markDefault(s, a)
			}
		}
		got := s.AppendMOM(nil)
		if err := sameEntries(got, b.Attrs); err != nil {
			t.Errorf("%s: %v", x.where, err)
		}
		for k := 0; k < len(got) && k < len(b.Attrs); k++ {
			isDflt := got[k].Flags&attr.FlagDefault != 0
			if isDflt != (b.Attrs[k].Op == int(attr.OpDflt)) {
				t.Errorf("%s: %s: default flag %v, op %d", x.where, b.Attrs[k].FullName(), isDflt, b.Attrs[k].Op)
			}
		}
		n++
	}
	t.Logf("checked %d QueueJob requests to MOMs", n)
	if n == 0 {
		t.Error("no QueueJob to a MOM found")
	}
}

func markDefault(s *attr.Set, a batchreq.Attr) {
	tab := s.Table()
	d, _ := tab.Lookup(a.Name)
	if d.Type == attr.TypeResourceList {
		rd, _ := tab.Resources().Lookup(a.Resource)
		s.PutResource(d.Index(), rd, s.Resource(d.Index(), rd).WithFlags(attr.FlagDefault))
		return
	}
	s.Put(d.Index(), s.Get(d.Index()).WithFlags(attr.FlagDefault))
}

// TestCaptureRequestValues decodes the attribute values of every QueueJob,
// ModifyJob and Manager request the captures contain. Requests the real
// server accepted must decode without error.
func TestCaptureRequestValues(t *testing.T) {
	n := 0
	for _, x := range captureExchanges(t) {
		var tab *attr.Table
		var list batchreq.AttrList
		switch b := x.req.Body.(type) {
		case *batchreq.QueueJob:
			tab, list = attr.JobTable(), b.Attrs
		case *batchreq.Manage:
			switch x.req.Type {
			case batchreq.PBS_BATCH_ModifyJob, batchreq.PBS_BATCH_Manager:
				tab, list = tableFor(b.ObjType), b.Attrs
			}
		}
		if tab == nil || x.rep == nil || x.rep.Code != 0 {
			continue
		}
		s := attr.NewSet(tab)
		for _, a := range list {
			op := attr.Op(a.Op)
			var err error
			if x.req.Type == batchreq.PBS_BATCH_QueueJob {
				err = s.Decode(a.Name, a.Resource, a.HasResource, a.Value)
			} else {
				err = s.ModifyText(a.Name, a.Resource, a.Value, op)
			}
			if err != nil {
				t.Errorf("%s: request %d %s %s=%q op %d: %v", x.where, x.req.Type, tab.Object, a.FullName(), a.Value, a.Op, err)
			}
			n++
		}
	}
	t.Logf("decoded %d request values", n)
	if n == 0 {
		t.Error("no request values found")
	}
}
