package jobexec

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopbs/mom/momd"
	"gopbs/mom/resc"
)

// PBSVersion is the value of PBS_VERSION in job environments.
const PBSVersion = "TORQUE-" + momd.Version

// envList is an ordered environment where a later Set replaces the value but
// keeps the first position.
type envList struct {
	names  []string
	values map[string]string
}

func newEnvList() *envList { return &envList{values: map[string]string{}} }

func (e *envList) Set(name, value string) {
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *envList) Has(name string) bool { _, ok := e.values[name]; return ok }

func (e *envList) Get(name string) string { return e.values[name] }

func (e *envList) Environ() []string {
	out := make([]string, len(e.names))
	for i, n := range e.names {
		out[i] = n + "=" + e.values[n]
	}
	return out
}

// readPBSEnvironment reads NAME=value lines of PBS_HOME/pbs_environment.
func readPBSEnvironment(file string) []Var {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var vars []Var
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if name, value, ok := strings.Cut(line, "="); ok && name != "" {
			vars = append(vars, Var{Name: name, Value: value})
		}
	}
	return vars
}

// jobEnvironment builds the job's environment (spec 11 §4).
func (e *Engine) jobEnvironment(r *runningJob, shell string) []string {
	j := r.job
	env := newEnvList()
	for _, v := range readPBSEnvironment(filepath.Join(e.home, "pbs_environment")) {
		env.Set(v.Name, v.Value)
	}
	userTmp := false
	for _, v := range j.Variables {
		env.Set(v.Name, v.Value)
		if v.Name == "TMPDIR" {
			userTmp = true
		}
	}
	env.Set("HOME", r.cred.Home)
	env.Set("LOGNAME", r.cred.Name)
	env.Set("PBS_JOBNAME", j.Name)
	env.Set("PBS_JOBID", j.ID)
	env.Set("PBS_QUEUE", j.Queue)
	env.Set("SHELL", shell)
	env.Set("USER", r.cred.Name)
	env.Set("PBS_JOBCOOKIE", j.Cookie)
	env.Set("PBS_NODENUM", "0")
	env.Set("PBS_TASKNUM", "1")
	env.Set("PBS_MOMPORT", strconv.Itoa(e.opt.MomPort))
	if r.nodefile != "" {
		env.Set("PBS_NODEFILE", e.nodefileEnvPath(j.ID))
		env.Set("PBS_GPUFILE", e.nodefileEnvPath(j.ID)+"gpu")
	}
	if v, ok := j.Resource("walltime"); ok {
		if secs, err := resc.ParseTime(v); err == nil {
			env.Set("PBS_WALLTIME", strconv.FormatInt(secs, 10))
		}
	}
	if v, ok := j.Resource("size"); ok {
		env.Set("PBS_NNODES", v)
	}
	nodes, _ := j.Resource("nodes")
	nn, ppn := nodesCounts(nodes)
	env.Set("PBS_NUM_NODES", strconv.Itoa(nn))
	env.Set("PBS_NUM_PPN", strconv.Itoa(ppn))
	if r.tmpdir != "" && !userTmp {
		env.Set("TMPDIR", r.tmpdir)
	}
	env.Set("PBS_VERSION", PBSVersion)
	env.Set("PBS_VNODENUM", "0")
	np := len(r.vnodes)
	if np == 0 {
		np = 1
	}
	env.Set("PBS_NP", strconv.Itoa(np))
	if r.inter != nil {
		if r.inter.term != "" {
			_, term, _ := strings.Cut(r.inter.term, "=")
			env.Set("TERM", term)
		}
		env.Set("PBS_ENVIRONMENT", "PBS_INTERACTIVE")
		return env.Environ()
	}
	env.Set("PBS_ENVIRONMENT", "PBS_BATCH")
	env.Set("ENVIRONMENT", "BATCH")
	return env.Environ()
}

// nodefileEnvPath is the PBS_NODEFILE value: note TORQUE's double slash
// ("<PBS_HOME>/aux//<jobid>").
func (e *Engine) nodefileEnvPath(jobID string) string {
	return strings.TrimSuffix(e.home, "/") + "/aux//" + jobID
}

// scriptEnvironment is the environment of prologue/epilogue scripts
// (spec 11 §8.4): MOM's own environment plus a few job values.
func (e *Engine) scriptEnvironment(r *runningJob) []string {
	env := newEnvList()
	for _, kv := range os.Environ() {
		if n, v, ok := strings.Cut(kv, "="); ok {
			env.Set(n, v)
		}
	}
	j := r.job
	if v, ok := j.Resource("nodes"); ok {
		env.Set("PBS_RESOURCE_NODES", v)
	}
	if v, ok := j.Resource("gres"); ok {
		env.Set("PBS_RESOURCE_GRES", v)
	}
	if r.tmpdir != "" {
		env.Set("TMPDIR", r.tmpdir)
	}
	env.Set("PBS_NODENUM", "0")
	env.Set("PBS_MSHOST", e.opt.Host)
	if r.nodefile != "" {
		env.Set("PBS_NODEFILE", e.nodefileEnvPath(j.ID))
	}
	if v, ok := j.Var("PBS_O_WORKDIR"); ok {
		env.Set("PBS_O_WORKDIR", v)
	}
	if v, ok := j.Var("BEOWULF_JOB_MAP"); ok {
		env.Set("BEOWULF_JOB_MAP", v)
	}
	return env.Environ()
}
