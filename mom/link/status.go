package link

import (
	"context"
	"strconv"
	"strings"

	"gopbs/mom/sysinfo"
)

// collector returns the system collector for the current configuration:
// the values of the IS status and of the generic RM queries come from
// package sysinfo, the MOM's own state (state, jobs, message, varattr)
// from here.
func (m *Mom) collector() *sysinfo.Collector {
	return &sysinfo.Collector{Proc: m.opt.Proc.Root, Config: m.conf(), Now: m.opt.Now}
}

// StatusStrings returns the body of an IS_STATUS message (spec 10 §5.3).
func (m *Mom) StatusStrings(ctx context.Context) []string {
	m.mu.Lock()
	message := m.message
	m.mu.Unlock()
	return m.collector().Status(sysinfo.Dynamic{
		State:   m.stateName(),
		Jobs:    m.jobIDs(),
		VarAttr: m.varAttrs(ctx),
		Message: message,
	})
}

// resource answers one generic RM request line ("name" or
// "name[param]"): the items of MOM's own state here, everything else
// from the system collector. It returns the value or an RM error number.
func (m *Mom) resource(ctx context.Context, request string) (string, int) {
	name, _, _ := strings.Cut(request, "[")
	switch name {
	case "state":
		return m.stateName(), 0
	case "jobs":
		if ids := m.jobIDs(); len(ids) > 0 {
			return strings.Join(ids, " "), 0
		}
		return " ", 0
	case "varattr":
		if v := m.varAttrs(ctx); v != "" {
			return v, 0
		}
		return " ", 0
	case "message":
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.message, 0
	case "jobdata":
		return "", 0
	}
	return m.collector().Query(request)
}

// stateName is the state= status item: down, busy or free.
func (m *Mom) stateName() string {
	switch {
	case m.reportedDown():
		return "down"
	case m.busy():
		return "busy"
	}
	return "free"
}

// jobIDs lists the ids of the jobs MOM holds in arrival order, sister
// jobs included.
func (m *Mom) jobIDs() []string {
	list := m.listedJobs()
	ids := make([]string, len(list))
	for i, j := range list {
		ids[i] = j.id
	}
	return ids
}

// varAttrs runs the $varattr commands (each at most once per its TTL) and
// returns their outputs joined by ";", "" when none are configured.
func (m *Mom) varAttrs(ctx context.Context) string {
	cfg := m.conf()
	if len(cfg.VarAttrs) == 0 {
		return ""
	}
	m.mu.Lock()
	if m.varAttr == nil || m.varAttrCfg != cfg {
		ttls := make([]int, len(cfg.VarAttrs))
		commands := make([]string, len(cfg.VarAttrs))
		for i, va := range cfg.VarAttrs {
			ttls[i], commands[i] = va.TTL, va.Command
		}
		m.varAttr, m.varAttrCfg = sysinfo.NewVarAttrRunner(ttls, commands), cfg
	}
	runner := m.varAttr
	m.mu.Unlock()
	return runner.Value(ctx)
}

// busy applies $max_load/$ideal_load, or their $auto_ forms, with
// hysteresis (spec 10 §5.7).
func (m *Mom) busy() bool {
	cfg := m.conf()
	maxLoad, idealLoad := cfg.MaxLoad, cfg.IdealLoad
	if cfg.AutoMaxLoad != "" || cfg.AutoIdealLoad != "" {
		ncpus, tasks := m.loadBases()
		if v, err := sysinfo.AutoLoad(cfg.AutoMaxLoad, ncpus, tasks); err == nil {
			maxLoad = v
		}
		if v, err := sysinfo.AutoLoad(cfg.AutoIdealLoad, ncpus, tasks); err == nil {
			idealLoad = v
		}
	}
	if maxLoad < 0 && idealLoad < 0 {
		return false
	}
	load, err := m.collector().LoadAverage()
	if err != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	busy, _ := m.load.Update(load, maxLoad, idealLoad)
	return busy
}

// loadBases returns the numbers an $auto_max_load expression refers to:
// the CPUs and the running jobs.
func (m *Mom) loadBases() (ncpus, tasks int) {
	if v, rmerr := m.collector().Query("ncpus"); rmerr == 0 {
		ncpus, _ = strconv.Atoi(v)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range m.jobs {
		if j.stage == stageRunning {
			tasks++
		}
	}
	return ncpus, tasks
}
