package jobexec

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// outputFiles are the files a job writes its stdout/stderr to on this host.
type outputFiles struct {
	outPath, errPath string // "" = /dev/null
	joined           byte   // 0, 'o' (stderr into stdout) or 'e' (stdout into stderr)
}

// keepName returns "<home>/<basename(Job_Name)>.<o|e><seq>"; for an array
// sub-job "12[3].srv" it is "<name>-3.o12".
func keepName(home string, j *Job, letter string) string {
	name := path.Base(j.Name)
	seq := j.Seq()
	if open := strings.IndexByte(j.ID, '['); open >= 0 {
		if end := strings.IndexByte(j.ID[open:], ']'); end > 1 {
			name += "-" + j.ID[open+1:open+end]
		}
	}
	return filepath.Join(home, name+"."+letter+seq)
}

// planOutput decides where stdout and stderr go (spec 11 §5.1).
func (e *Engine) planOutput(j *Job, cred *Credentials) outputFiles {
	var of outputFiles
	switch j.JoinPath {
	case "oe":
		of.joined = 'o'
	case "eo":
		of.joined = 'e'
	}
	one := func(letter string, final string) string {
		if strings.Contains(j.KeepFiles, letter) {
			return keepName(cred.Home, j, letter)
		}
		_, p := splitHostPath(final)
		if p == "/dev/null" {
			return ""
		}
		if p != "" && (e.conf().SpoolAsFinalName || e.inNospoolDir(j)) {
			return expandJobVars(p, j, cred)
		}
		suffix := ".OU"
		if letter == "e" {
			suffix = ".ER"
		}
		return filepath.Join(e.home, "spool", j.Prefix+suffix)
	}
	of.outPath = one("o", j.OutputPath)
	of.errPath = one("e", j.ErrorPath)
	return of
}

func (e *Engine) inNospoolDir(j *Job) bool {
	wd, ok := j.Var("PBS_O_WORKDIR")
	if !ok || len(e.conf().NospoolDirList) == 0 {
		return false
	}
	for _, pat := range e.conf().NospoolDirList {
		pat = strings.TrimSuffix(pat, "/")
		for d := wd; d != "/" && d != "." && d != ""; d = path.Dir(d) {
			if ok, _ := path.Match(pat, d); ok {
				return true
			}
		}
	}
	return false
}

// createOutput creates (or reopens for append) one output file for the user.
// Files outside MOM's spool directory are created with the user's
// file-system identity; spool files are created by root and given to the
// user.
func (e *Engine) createOutput(name string, cred *Credentials, umask int) (*os.File, error) {
	if name == "" {
		return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	if filepath.Dir(name) != filepath.Join(e.home, "spool") {
		var f *os.File
		err := asUser(cred, func() error {
			var err error
			f, err = createOutputFile(name, cred, umask)
			return err
		})
		return f, err
	}
	return createOutputFile(name, cred, umask)
}

func createOutputFile(name string, cred *Credentials, umask int) (*os.File, error) {
	mode := os.FileMode(0o666 &^ umask)
	flags := os.O_WRONLY | os.O_APPEND | os.O_CREATE | syscall.O_NOFOLLOW
	f, err := os.OpenFile(name, flags|os.O_EXCL, mode)
	if errors.Is(err, os.ErrExist) {
		f, err = os.OpenFile(name, flags, mode)
		if err != nil {
			return nil, fmt.Errorf("open output %s: %w", name, err)
		}
		if st, ok := statOwner(f); ok && st != cred.UID {
			f.Close()
			return nil, fmt.Errorf("output %s is not owned by %s", name, cred.Name)
		}
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("create output %s: %w", name, err)
	}
	if err := f.Chown(int(cred.UID), int(cred.GID)); err != nil && os.Getuid() == 0 {
		f.Close()
		return nil, fmt.Errorf("chown output %s: %w", name, err)
	}
	_ = f.Chmod(mode)
	return f, nil
}

func statOwner(f *os.File) (uint32, bool) {
	fi, err := f.Stat()
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// openOutputs creates the job's stdout and stderr files and returns them;
// with a join both are the same *os.File.
func (e *Engine) openOutputs(r *runningJob) (stdout, stderr *os.File, err error) {
	of := r.out
	umask := e.outputUmask(r.job)
	switch of.joined {
	case 'o':
		f, err := e.createOutput(of.outPath, r.cred, umask)
		return f, f, err
	case 'e':
		f, err := e.createOutput(of.errPath, r.cred, umask)
		return f, f, err
	}
	if stdout, err = e.createOutput(of.outPath, r.cred, umask); err != nil {
		return nil, nil, err
	}
	if stderr, err = e.createOutput(of.errPath, r.cred, umask); err != nil {
		stdout.Close()
		return nil, nil, err
	}
	return stdout, stderr, nil
}

// reopenOutputs opens the job's existing output files for appending (epilogue
// output, "job killed" messages).
func (e *Engine) reopenOutputs(r *runningJob) (stdout, stderr *os.File) {
	open := func(p string) *os.File {
		f, err := e.appendOutput(r, p)
		if err != nil {
			f, _ = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		}
		return f
	}
	switch r.out.joined {
	case 'o':
		f := open(r.out.outPath)
		return f, f
	case 'e':
		f := open(r.out.errPath)
		return f, f
	}
	return open(r.out.outPath), open(r.out.errPath)
}

// stderrPath is the file holding the job's stderr.
func (r *runningJob) stderrPath() string {
	if r.out.joined == 'o' {
		return r.out.outPath
	}
	return r.out.errPath
}

// outputUmask is the umask for output files and job processes: the job's
// umask attribute, else $job_output_file_umask (-1 = userdefault → 022).
func (e *Engine) outputUmask(j *Job) int {
	if j.Umask >= 0 {
		return j.Umask
	}
	if e.conf().OutputUmask >= 0 {
		return e.conf().OutputUmask
	}
	return 0o022
}

// appendOutput opens an existing output file of the job for appending, with
// the user's file-system identity unless it is a spool file.
func (e *Engine) appendOutput(r *runningJob, p string) (*os.File, error) {
	if p == "" {
		return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	open := func() (*os.File, error) {
		return os.OpenFile(p, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NOCTTY, 0)
	}
	if filepath.Dir(p) == filepath.Join(e.home, "spool") || r.cred == nil {
		return open()
	}
	var f *os.File
	err := asUser(r.cred, func() error {
		var err error
		f, err = open()
		return err
	})
	return f, err
}

// expandJobVars expands $HOME, $PBS_JOBID and similar variables (and any
// Variable_List entry) in a final output path.
func expandJobVars(p string, j *Job, cred *Credentials) string {
	return os.Expand(p, func(name string) string {
		switch name {
		case "HOME":
			return cred.Home
		case "USER", "LOGNAME":
			return cred.Name
		case "PBS_JOBID":
			return j.ID
		case "PBS_JOBNAME":
			return j.Name
		}
		v, _ := j.Var(name)
		return v
	})
}
