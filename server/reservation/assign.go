package reservation

import (
	"slices"
	"sort"
	"strings"
	"time"

	"gopbs/batchreq"
	"gopbs/resv"
	"gopbs/sched/reservable"
	"gopbs/server/handler"
)

// candidates returns the server's nodes marked Reserved where another
// reservation holds them in r's window, and the holders.
func (s *Service) candidates(r *resv.Reservation, except string) ([]*reservable.Node, map[string]*resv.Reservation) {
	var nodes []*reservable.Node
	for _, n := range s.host.Nodes() {
		// a reservation holds nodes of its partition (plus_reserve
		// -partition), or of none
		if n.Partition == r.Partition {
			nodes = append(nodes, n)
		}
	}
	held := resv.Held(s.tab.models(), r.Start, r.End, except)
	for _, n := range nodes {
		n.Reserved = held[n.Name] != nil
	}
	return nodes, held
}

// assign chooses r's nodes: the ones it names, or Wanted of the nodes
// that meet the normal conditions and the policy, in the rules' node
// order, preferring keep (the nodes a modified reservation has). It returns them, or nil and why
// not. Called with the lock held.
func (s *Service) assign(rules Rules, r *resv.Reservation, keep []string, now time.Time) ([]string, string) {
	all, held := s.candidates(r, r.ID)
	pol := rules.Policy
	ordered := slices.Clone(all)
	reservable.SortNodes(ordered, rules.NodeOrder)
	byName := make(map[string]*reservable.Node, len(all))
	for _, n := range all {
		byName[n.Name] = n
	}
	var cands []*reservable.Node
	if len(r.Nodes) > 0 {
		var unknown []string
		for _, name := range r.Nodes {
			n := byName[name]
			if n == nil {
				unknown = append(unknown, name)
				continue
			}
			cands = append(cands, n)
		}
		if len(unknown) > 0 {
			return nil, "unknown node " + strings.Join(unknown, ", ")
		}
	} else {
		for _, name := range keep {
			if n := byName[name]; n != nil {
				cands = append(cands, n)
			}
		}
		for _, n := range ordered {
			if !slices.Contains(keep, n.Name) {
				cands = append(cands, n)
			}
		}
	}
	wanted := r.Wanted()
	req := &reservable.Request{ID: r.ID, Owner: r.Owner, Users: r.Users, Start: r.Start, End: r.End,
		NodeCount: wanted, Req: r.Req}
	chosen, refused := pol.Choose(reservable.Input{Now: now, Request: req, All: all, RsvUtil: s.rsvUtil}, cands)
	if len(chosen) >= wanted && wanted > 0 {
		names := make([]string, len(chosen))
		for i, n := range chosen {
			names[i] = n.Name
		}
		return names, ""
	}
	if len(all) == 0 && r.Partition != "" {
		return nil, "partition " + r.Partition + " has no nodes"
	}
	if len(all) == 0 {
		return nil, "the server has no nodes"
	}
	// the nodes that passed and the held ones: Shortage counts the first
	var names []string
	for _, n := range chosen {
		names = append(names, n.Name)
	}
	var other []string
	for _, n := range cands {
		switch why, refusedHere := refused[n.Name]; {
		case held[n.Name] != nil:
			names = append(names, n.Name)
		case refusedHere:
			other = append(other, n.Name+" "+why)
		}
	}
	msg := resv.Shortage(wanted, names, held, r.Start, r.End, s.loc())
	if len(other) > 0 {
		msg += "; " + strings.Join(other, ", ")
	}
	return nil, msg
}

// rsvUtil is plus_rsvutil(owner, start, end) of reservable.ad: the
// owner's reservations overlapping the window (not cancelled before
// their start), the seconds and node-hours inside it. Called with the
// lock held.
func (s *Service) rsvUtil(owner string, start, end int64) (int, int64, float64) {
	count, secs, nodeHours := 0, int64(0), 0.0
	for _, e := range s.tab.list() {
		if e.Owner != owner || !(e.Holds() || e.State == resv.Done) {
			continue
		}
		from, to := max(e.Start.Unix(), start), min(e.End.Unix(), end)
		if to <= from {
			continue
		}
		count++
		secs += to - from
		nodeHours += float64(to-from) * float64(e.Wanted()) / 3600
	}
	return count, secs, nodeHours
}

// AvailNodes serves ResvAvailNodes (plus_availnodes): the nodes that
// could be reserved for the whole window with the requirements given,
// of the partition given (resv_partition, plus_availnodes -partition) or
// of none, as a reservation would hold them. A partition no node is in is
// refused as ResvSubmit refuses it.
func (s *Service) AvailNodes(w handler.ReplyWriter, b *batchreq.ResvAvail) {
	r, err := resv.FromAttrs("", getter(b.Attrs))
	if err != nil {
		reject(w, batchreq.PBSE_BADATVAL, "%v", err)
		return
	}
	if b.End <= b.Start || b.Start < 0 {
		reject(w, batchreq.PBSE_BADATVAL, "end %d is not after start %d", b.End, b.Start)
		return
	}
	r.Start, r.End = time.Unix(b.Start, 0), time.Unix(b.End, 0)
	rules, err := s.host.Rules()
	if err != nil {
		reject(w, batchreq.PBSE_SYSTEM, "%v", err)
		return
	}
	pol := rules.Policy
	s.host.Lock()
	if why := s.unknownPartition(r.Partition); why != "" {
		s.host.Unlock()
		reject(w, batchreq.PBSE_BADATVAL, "%s", why)
		return
	}
	all, _ := s.candidates(r, "")
	req := &reservable.Request{Start: r.Start, End: r.End, NodeCount: len(all), Req: r.Req}
	chosen, _ := pol.Choose(reservable.Input{Now: s.host.Now(), Request: req, All: all, RsvUtil: s.rsvUtil}, all)
	s.host.Unlock()
	p := &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status}
	for _, n := range chosen {
		p.Status = append(p.Status, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_NODE, Name: n.Name})
	}
	w.Send(p)
}

// Status serves ResvStatus (plus_status).
func (s *Service) Status(w handler.ReplyWriter, b *batchreq.ResvStatus) {
	s.host.RLock()
	defer s.host.RUnlock()
	var live, expired []*entry
	for _, e := range s.tab.list() {
		switch {
		case e.State.Final():
			continue
		case b.ID != "":
			if n, err := resv.ParseID(b.ID); err != nil || n != e.num {
				continue
			}
		case b.Owner != "" && e.Owner != b.Owner:
			continue
		case b.End > 0 && !e.Overlaps(time.Unix(b.Start, 0), time.Unix(b.End, 0)):
			continue
		case b.End == 0 && b.Start > 0 && !e.End.After(time.Unix(b.Start, 0)):
			continue
		}
		if b.ID == "" && (e.State == resv.Done || e.State == resv.Cancelled) {
			expired = append(expired, e)
			continue
		}
		live = append(live, e)
	}
	if b.ID != "" && len(live) == 0 {
		reject(w, batchreq.PBSE_UNKJOBID, "unknown reservation %s", b.ID)
		return
	}
	keep := b.Expired
	if keep < 0 {
		keep = s.ExpiredShown
	}
	sort.SliceStable(expired, func(i, j int) bool { return expired[i].Finished > expired[j].Finished })
	if len(expired) > keep {
		expired = expired[:keep]
	}
	out := append(live, expired...)
	sort.Slice(out, func(i, j int) bool { return out[i].num < out[j].num })
	p := &batchreq.Reply{Choice: batchreq.BATCH_REPLY_CHOICE_Status}
	for _, e := range out {
		p.Status = append(p.Status, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_RESV, Name: e.ID, Attrs: e.StatusAttrs()})
	}
	w.Send(p)
}
