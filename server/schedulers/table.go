package schedulers

import (
	"fmt"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopbs/batchreq"
	"gopbs/server/store"
)

// recordPrefix is the key prefix of sched records in the store's server
// bucket ("sched/<name>").
const recordPrefix = "sched/"

// RecordKey returns the store key (in store.Server) of a sched object.
func RecordKey(name string) string { return recordPrefix + name }

// IsRecordKey reports whether a key of store.Server is a sched record.
func IsRecordKey(key string) bool { return strings.HasPrefix(key, recordPrefix) }

// Env is what a Table needs to know of its server.
type Env struct {
	Home string // PBS_HOME
	Host string // the server's host name: every scheduler's host by default
	User string // the user the server runs as: sched_user's default
	// DefaultPort is the port of the default scheduler (pbs_server -S).
	DefaultPort int
	// LookupUser reports whether a user exists (nil: os/user).
	LookupUser func(name string) bool
}

// Mirror is the default scheduler's side of the server's attributes:
// its scheduling and scheduler_iteration are the server's.
type Mirror struct {
	Scheduling bool
	Iteration  int64
	State      string // the default scheduler's state as the server's link knows it
}

// Table holds the sched objects. It is safe for concurrent use; callers
// may hold their own locks while calling it, never the other way round.
type Table struct {
	env Env

	mu     sync.RWMutex
	scheds map[string]*Sched
	order  int64
	states map[string]string // name → DOWN, IDLE or SCHEDULING (not durable)
}

// NewTable returns a table holding only the default scheduler.
func NewTable(env Env) *Table {
	if env.LookupUser == nil {
		env.LookupUser = func(name string) bool { _, err := user.Lookup(name); return err == nil }
	}
	t := &Table{env: env, scheds: map[string]*Sched{}, states: map[string]string{}}
	t.scheds[DefaultName] = t.defaultSched()
	return t
}

// defaultSched is the default scheduler as a new server has it.
func (t *Table) defaultSched() *Sched {
	return &Sched{Name: DefaultName, Host: t.env.Host, Port: t.env.DefaultPort,
		Priv: filepath.Join(t.env.Home, "sched_priv"), Log: filepath.Join(t.env.Home, "sched_logs"),
		Iteration: DefaultIteration, User: t.env.User}
}

// Load adds a sched object read from the store (Decode of a record under
// RecordKey). The default scheduler's fixed attributes stay the server's.
func (t *Table) Load(s *Sched) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.IsDefault() {
		d := t.defaultSched()
		d.User, d.Comment, d.Accumulation = s.User, s.Comment, s.Accumulation
		t.scheds[DefaultName] = d
		return
	}
	t.scheds[s.Name] = s
	if s.Order >= t.order {
		t.order = s.Order + 1
	}
}

// Get returns a copy of the named sched object, or nil.
func (t *Table) Get(name string) *Sched {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if s := t.scheds[name]; s != nil {
		return s.clone()
	}
	return nil
}

// List returns copies of the sched objects, default first, then in
// creation order.
func (t *Table) List() []*Sched {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.listLocked()
}

func (t *Table) listLocked() []*Sched {
	out := make([]*Sched, 0, len(t.scheds))
	for _, s := range t.scheds {
		out = append(out, s.clone())
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].IsDefault() != out[b].IsDefault() {
			return out[a].IsDefault()
		}
		return out[a].Order < out[b].Order
	})
	return out
}

// StateOf returns a non-default scheduler's state as SetState last
// recorded it, StateDown if never.
func (t *Table) StateOf(name string) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if st := t.states[name]; st != "" {
		return st
	}
	return StateDown
}

// SetState records a scheduler's state (DOWN, IDLE, SCHEDULING).
func (t *Table) SetState(name, st string) {
	t.mu.Lock()
	t.states[name] = st
	t.mu.Unlock()
}

// SetComment sets a scheduler's comment (the supervisor's notes) and
// returns the store operation that keeps it, or false if there is no
// such scheduler.
func (t *Table) SetComment(name, comment string) (store.Op, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.scheds[name]
	if s == nil {
		return store.Op{}, false
	}
	s.Comment = comment
	return store.Put(store.Server, RecordKey(name), s.Encode()), true
}

// SetScheduling sets a (non-default) scheduler's scheduling attribute,
// as the server does when it cannot run it, and returns the store
// operation that keeps it.
func (t *Table) SetScheduling(name string, on bool, comment string) (store.Op, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.scheds[name]
	if s == nil || s.IsDefault() {
		return store.Op{}, false
	}
	s.Scheduling = on
	if comment != "" {
		s.Comment = comment
	}
	return store.Put(store.Server, RecordKey(name), s.Encode()), true
}

// SetHost sets a (non-default) scheduler's host, as the server does when
// it takes the scheduler over from a failover peer, and returns the
// store operation that keeps it.
func (t *Table) SetHost(name, host string) (store.Op, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.scheds[name]
	if s == nil || s.IsDefault() || host == "" {
		return store.Op{}, false
	}
	s.Host = host
	return store.Put(store.Server, RecordKey(name), s.Encode()), true
}

// Owner returns the name of the scheduler serving partition p: the
// default scheduler for "" (no partition), "" when no scheduler serves p.
func (t *Table) Owner(p string) string {
	if p == "" {
		return DefaultName
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, s := range t.scheds {
		if s.HasPartition(p) {
			return s.Name
		}
	}
	return ""
}

// Slice returns what the named scheduler sees, or nil (everything) for
// an unknown name.
func (t *Table) Slice(name string) *Slice {
	t.mu.RLock()
	defer t.mu.RUnlock()
	s := t.scheds[name]
	if s == nil {
		return nil
	}
	v := &Slice{Name: name, Default: s.IsDefault(), parts: map[string]bool{}}
	for _, p := range s.Partitions {
		v.parts[p] = true
	}
	return v
}

// Status returns the status of one sched object (name) or of all (name
// ""), with the wanted attributes (all if want is empty). m gives the
// default scheduler's mirrored attributes.
func (t *Table) Status(name string, want batchreq.AttrList, m Mirror) ([]batchreq.StatusObject, *batchreq.Reply) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var list []*Sched
	if name == "" {
		list = t.listLocked()
	} else if s := t.scheds[name]; s != nil {
		list = []*Sched{s.clone()}
	} else {
		return nil, batchreq.ErrorReply(batchreq.PBSE_UNKSCHED, "", "")
	}
	for i := range want {
		if !slices.Contains(attrOrder, want[i].Name) {
			return nil, batchreq.BadAttrReply(batchreq.PBSE_NOATTR, &want[i])
		}
	}
	objs := make([]batchreq.StatusObject, 0, len(list))
	for _, s := range list {
		st := t.states[s.Name]
		if s.IsDefault() {
			s.Scheduling, s.Iteration, st = m.Scheduling, m.Iteration, m.State
		}
		if st == "" {
			st = StateDown
		}
		var attrs batchreq.AttrList
		for _, n := range attrOrder {
			if len(want) > 0 && !slices.ContainsFunc(want, func(a batchreq.Attr) bool { return a.Name == n }) {
				continue
			}
			v := s.value(n)
			if n == AttrState {
				v = st
			}
			if v == "" {
				continue
			}
			attrs = append(attrs, batchreq.Attr{Name: n, Value: v})
		}
		objs = append(objs, batchreq.StatusObject{ObjType: batchreq.MGR_OBJ_SCHED, Name: s.Name, Attrs: attrs})
	}
	return objs, nil
}

// Change is the outcome of a Manager request on sched objects.
type Change struct {
	// Reply is the error reply of a refused request (nothing changed),
	// nil when the request is granted.
	Reply *batchreq.Reply
	// Ops make the change durable.
	Ops []store.Op
	// Server holds the default scheduler's mirrored attributes set or
	// unset by the request, for the server to apply to its own
	// (scheduling, scheduler_iteration), with Unset saying which.
	Server batchreq.AttrList
	Unset  bool
	// Log holds the server log lines of the change.
	Log []string
	// Name is the sched object changed.
	Name string
	// Deleted is set when it was deleted.
	Deleted bool
}

func refuse(code int, text string) Change {
	if text == "" {
		return Change{Reply: batchreq.ErrorReply(code, "", "")}
	}
	return Change{Reply: batchreq.TextReply(code, text)}
}

// validName reports whether a scheduler name is acceptable: a letter or
// digit first, then letters, digits, '_' and '-'.
func validName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// Manage applies a Manager request on sched objects (create, delete,
// set, unset). portFree reports whether a port may be given to a new
// scheduler (nobody listens there); nil takes every port as free.
// Nothing changes unless the whole request is granted.
func (t *Table) Manage(m *batchreq.Manage, portFree func(int) bool) Change {
	name := m.ObjName
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch m.Command {
	case batchreq.MGR_CMD_CREATE:
		if len(name) > batchreq.PBS_MAXSCHEDNAME {
			return refuse(batchreq.PBSE_SCHED_NAME_BIG, "")
		}
		if !validName(name) {
			return refuse(batchreq.PBSE_IVALREQ, "")
		}
		if t.scheds[name] != nil {
			return refuse(batchreq.PBSE_SCHED_EXIST, "")
		}
		s := &Sched{Name: name, Host: t.env.Host, Priv: filepath.Join(t.env.Home, "sched_priv_"+name),
			Log: filepath.Join(t.env.Home, "sched_logs_"+name), Iteration: DefaultIteration, User: t.env.User, Order: t.order}
		ch := t.apply(s, m.Attrs, false)
		if ch.Reply != nil {
			return ch
		}
		if s.Port == 0 {
			s.Port = t.freePort(portFree)
		}
		if c := t.dirConflict(s); c.Reply != nil {
			return c
		}
		t.order++
		t.scheds[name] = s
		ch.Name = name
		ch.Log = append([]string{"created"}, ch.Log...)
		ch.Ops = append(ch.Ops, store.Put(store.Server, RecordKey(name), s.Encode()))
		return ch
	case batchreq.MGR_CMD_DELETE:
		s := t.scheds[name]
		switch {
		case s == nil:
			return refuse(batchreq.PBSE_UNKSCHED, "")
		case s.IsDefault():
			return refuse(batchreq.PBSE_SCHED_OP_DEFAULT, "")
		}
		delete(t.scheds, name)
		delete(t.states, name)
		return Change{Name: name, Deleted: true, Log: []string{"deleted"}, Ops: []store.Op{store.Del(store.Server, RecordKey(name))}}
	case batchreq.MGR_CMD_SET, batchreq.MGR_CMD_UNSET:
		if name == "" {
			name = DefaultName // "set sched scheduling = True": the old syntax
		}
		cur := t.scheds[name]
		if cur == nil {
			return refuse(batchreq.PBSE_UNKSCHED, "")
		}
		s := cur.clone()
		unset := m.Command == batchreq.MGR_CMD_UNSET
		ch := t.apply(s, m.Attrs, unset)
		if ch.Reply != nil {
			return ch
		}
		if s.Port == 0 {
			s.Port = t.freePort(portFree)
		}
		if c := t.dirConflict(s); c.Reply != nil {
			return c
		}
		t.scheds[name] = s
		ch.Name = name
		ch.Unset = unset
		ch.Ops = append(ch.Ops, store.Put(store.Server, RecordKey(name), s.Encode()))
		return ch
	}
	return refuse(batchreq.PBSE_IVALREQ, "")
}

// freePort returns the first port from FirstPort that no scheduler has
// and portFree accepts.
func (t *Table) freePort(portFree func(int) bool) int {
	for p := FirstPort; p < 65536; p++ {
		if t.portUsed(p, "") {
			continue
		}
		if portFree == nil || portFree(p) {
			return p
		}
	}
	return 0
}

func (t *Table) portUsed(p int, except string) bool {
	for _, o := range t.scheds {
		if o.Name != except && o.Port == p {
			return true
		}
	}
	return false
}

// dirConflict refuses a sched_priv or sched_log another scheduler uses.
func (t *Table) dirConflict(s *Sched) Change {
	for _, o := range t.scheds {
		if o.Name == s.Name {
			continue
		}
		if filepath.Clean(o.Log) == filepath.Clean(s.Log) {
			return refuse(batchreq.PBSE_SCHED_LOG_EXIST, "")
		}
		if filepath.Clean(o.Priv) == filepath.Clean(s.Priv) {
			return refuse(batchreq.PBSE_SCHED_PRIV_EXIST, "")
		}
	}
	return Change{}
}

// apply applies an attribute list to s (a copy); on refusal the Change
// holds the reply.
func (t *Table) apply(s *Sched, list batchreq.AttrList, unset bool) Change {
	var ch Change
	verb := "set"
	if unset {
		verb = "unset"
	}
	for i := range list {
		a := &list[i]
		if !slices.Contains(attrOrder, a.Name) || a.HasResource {
			return Change{Reply: batchreq.BadAttrReply(batchreq.PBSE_NOATTR, a)}
		}
		if a.Name == AttrState {
			return Change{Reply: batchreq.BadAttrReply(batchreq.PBSE_ATTRRO, a)}
		}
		if s.IsDefault() {
			switch a.Name {
			case AttrHost, AttrPort, AttrPriv, AttrLog, AttrPartitions:
				return refuse(batchreq.PBSE_SCHED_OP_DEFAULT, "")
			case AttrScheduling, AttrIteration:
				// mirrored to the server's attributes, which
				// the server sets (and checks) itself
				ch.Server = append(ch.Server, *a)
				continue
			}
		}
		if p := t.applyOne(s, a, unset); p != nil {
			return Change{Reply: p}
		}
		line := "attributes " + verb + ": " + a.Name
		if unset {
			line += " = "
		} else {
			line += " " + opSymbol(a.Op) + " " + a.Value
		}
		ch.Log = append(ch.Log, line)
	}
	return ch
}

func opSymbol(op int) string {
	switch op {
	case batchreq.INCR, batchreq.INCR_OLD:
		return "+"
	case batchreq.DECR:
		return "-"
	}
	return "="
}

// applyOne applies one attribute; it returns the refusal or nil.
func (t *Table) applyOne(s *Sched, a *batchreq.Attr, unset bool) *batchreq.Reply {
	bad := func() *batchreq.Reply { return batchreq.BadAttrReply(batchreq.PBSE_BADATVAL, a) }
	if unset {
		d := &Sched{Host: t.env.Host, Priv: filepath.Join(t.env.Home, "sched_priv_"+s.Name),
			Log: filepath.Join(t.env.Home, "sched_logs_"+s.Name), Iteration: DefaultIteration, User: t.env.User}
		switch a.Name {
		case AttrHost:
			s.Host = d.Host
		case AttrPort:
			s.Port = 0 // the next free one
		case AttrPartitions:
			s.Partitions = nil
		case AttrPriv:
			s.Priv = d.Priv
		case AttrLog:
			s.Log = d.Log
		case AttrScheduling:
			s.Scheduling = false
		case AttrIteration:
			s.Iteration = d.Iteration
		case AttrAccumulation:
			s.Accumulation = 0
		case AttrUser:
			s.User = d.User
		case AttrComment:
			s.Comment = ""
		}
		return nil
	}
	v := a.Value
	switch a.Name {
	case AttrHost:
		if strings.TrimSpace(v) == "" {
			return bad()
		}
		s.Host = strings.TrimSpace(v)
	case AttrPort:
		p, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || p <= 0 || p > 65535 || t.portUsed(p, s.Name) {
			return bad()
		}
		s.Port = p
	case AttrPartitions:
		vals := parseList(v)
		next := vals
		switch a.Op {
		case batchreq.INCR, batchreq.INCR_OLD:
			next = slices.Clone(s.Partitions)
			for _, p := range vals {
				if !slices.Contains(next, p) {
					next = append(next, p)
				}
			}
		case batchreq.DECR:
			next = slices.DeleteFunc(slices.Clone(s.Partitions), func(p string) bool { return slices.Contains(vals, p) })
		}
		for _, p := range next {
			for _, o := range t.scheds {
				if o.Name != s.Name && o.HasPartition(p) {
					return batchreq.TextReply(batchreq.PBSE_PART_ALREADY_USED,
						fmt.Sprintf("Partition %s is already associated with scheduler %s", p, o.Name))
				}
			}
		}
		s.Partitions = next
	case AttrPriv, AttrLog:
		if !filepath.IsAbs(v) {
			return bad()
		}
		if a.Name == AttrPriv {
			s.Priv = filepath.Clean(v)
		} else {
			s.Log = filepath.Clean(v)
		}
	case AttrScheduling:
		b, ok := parseBool(v)
		if !ok {
			return bad()
		}
		s.Scheduling = b
	case AttrIteration:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return bad()
		}
		s.Iteration = n
	case AttrAccumulation:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return bad()
		}
		s.Accumulation = n
	case AttrUser:
		v = strings.TrimSpace(v)
		if v == "" || !t.env.LookupUser(v) {
			return batchreq.BadAttrReply(batchreq.PBSE_BADUSER, a)
		}
		s.User = v
	case AttrComment:
		s.Comment = v
	}
	return nil
}

// Slice is what one scheduler sees of the cluster: the queues and nodes
// of its partitions (for the default scheduler, those of no partition).
// A nil *Slice sees everything (a connection that is no scheduler's).
type Slice struct {
	Name    string
	Default bool
	parts   map[string]bool
}

// Sees reports whether an object of partition p (a queue's or node's
// partition attribute, "" for none) is in the slice.
func (v *Slice) Sees(p string) bool {
	if v == nil {
		return true
	}
	if v.Default {
		return p == ""
	}
	return p != "" && v.parts[p]
}
