package jobexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// CopyFiles directions (spec 10 §8.5).
const (
	STAGE_DIR_IN   = 0
	STAGE_DIR_OUT  = 1
	CKPT_DIR_IN    = 2
	CKPT_DIR_OUT   = 3
	STDJOBFILE     = 1 // pair flag: job stdout/stderr spool file
	JOBCKPFILE     = 2 // pair flag: checkpoint file
	STAGEFILE      = 3 // pair flag: user stage file
	copyAttempts   = 3
	localCopyCmd   = "/bin/cp"
	localCopyFlags = "-rp"
)

// CopyPair is one file of a CopyFiles/DelFiles request: Local is the name on
// this host (a bare spool name for STDJOBFILE), Remote is "host:path".
type CopyPair struct {
	Flag   int
	Local  string
	Remote string
}

// CopyRequest is the body of CopyFiles (54) / DelFiles (55).
type CopyRequest struct {
	JobID     string
	Owner     string // Job_Owner user name (without @host)
	User      string // euser
	Group     string // egroup (may be empty)
	Direction int
	Pairs     []CopyPair
}

// CopyError is a partial or total delivery failure; Text is the reply text
// for PBSE_NOCOPYFILE.
type CopyError struct {
	Text string
}

func (e *CopyError) Error() string { return "file copy failed: " + e.Text }

// copyCtx carries the user context of one request.
type copyCtx struct {
	cred *Credentials
	env  []string
	vars map[string]string
}

func (e *Engine) newCopyCtx(req *CopyRequest) (*copyCtx, error) {
	cred, err := e.opt.Lookup(req.User, req.Group)
	if err != nil {
		return nil, fmt.Errorf("copy files for %s: %w", req.JobID, err)
	}
	vars := map[string]string{
		"HOME": cred.Home, "USER": cred.Name, "LOGNAME": cred.Name, "PBS_JOBID": req.JobID,
		"PATH": "/bin:/usr/bin",
	}
	cc := &copyCtx{cred: cred, vars: vars}
	for k, v := range vars {
		cc.env = append(cc.env, k+"="+v)
	}
	return cc, nil
}

// expand replaces $NAME and ${NAME} from the request's variables; an
// undefined variable is an error (wordexp with WRDE_UNDEF).
func (cc *copyCtx) expand(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		var name string
		if s[j] == '{' {
			end := strings.IndexByte(s[j:], '}')
			if end < 0 {
				return "", fmt.Errorf("bad variable reference in %q", s)
			}
			name, i = s[j+1:j+end], j+end
		} else {
			k := j
			for k < len(s) && (s[k] == '_' || s[k] >= 'A' && s[k] <= 'Z' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= '0' && s[k] <= '9') {
				k++
			}
			if k == j {
				b.WriteByte('$')
				continue
			}
			name, i = s[j:k], k-1
		}
		v, ok := cc.vars[name]
		if !ok {
			return "", fmt.Errorf("undefined variable %s in %q", name, s)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// localPath resolves the local side of a pair to an absolute path.
func (e *Engine) localPath(cc *copyCtx, p CopyPair) (string, error) {
	name, err := cc.expand(p.Local)
	if err != nil {
		return "", err
	}
	if p.Flag == STDJOBFILE && !strings.Contains(name, "/") {
		return filepath.Join(e.home, "spool", name), nil
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(cc.cred.Home, name)
	}
	return name, nil
}

// ResolveRemote reports whether "host:path" is local to this MOM and returns
// the local path (after $usecp substitution) if so.
func (e *Engine) ResolveRemote(remote string) (host, p string, local bool) {
	host, p = splitHostPath(remote)
	if host == "" || IsLocalHost(host, e.opt.Host) {
		return host, p, true
	}
	for _, u := range e.conf().UseCp {
		if ok, _ := path.Match(u.HostPattern, host); !ok && u.HostPattern != host {
			continue
		}
		if p == u.From || strings.HasPrefix(p, strings.TrimSuffix(u.From, "/")+"/") {
			return host, u.To + p[len(u.From):], true
		}
	}
	return host, p, false
}

// runAsUser runs a command as the request's user in the home directory and
// returns its combined stderr.
func runAsUser(ctx context.Context, cc *copyCtx, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = cc.env
	cmd.Dir = cc.cred.Home
	if fi, err := os.Stat(cmd.Dir); err != nil || !fi.IsDir() {
		cmd.Dir = "/"
	}
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
			Uid: cc.cred.UID, Gid: cc.cred.GID, Groups: cc.cred.Groups}}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	if fb, err := os.Stat(b); err == nil {
		if os.SameFile(fa, fb) {
			return true
		}
		if fb.IsDir() {
			if fc, err := os.Stat(filepath.Join(b, filepath.Base(a))); err == nil && os.SameFile(fa, fc) {
				return true
			}
		}
	}
	return false
}

// copyWithRetry runs the copy up to three times, pausing after the second
// failure; it returns the last error output.
func (e *Engine) copyWithRetry(ctx context.Context, cc *copyCtx, args []string) (string, error) {
	var out string
	var err error
	for attempt := 1; attempt <= copyAttempts; attempt++ {
		out, err = runAsUser(ctx, cc, args[0], args[1:]...)
		if err == nil {
			return "", nil
		}
		if attempt == 2 {
			select {
			case <-time.After(e.opt.CopyRetryPause):
			case <-ctx.Done():
				return out, ctx.Err()
			}
		}
	}
	if out == "" {
		out = err.Error() + "\n"
	}
	return out, err
}

// copyCommand builds the local or remote copy command line.
func (e *Engine) copyCommand(owner, src, dstHost, dst string, local bool) []string {
	if local {
		return []string{localCopyCmd, localCopyFlags, src, dst}
	}
	args := []string{e.conf().RcpCmd}
	args = append(args, strings.Fields(e.conf().RcpArgs)...)
	return append(args, src, owner+"@"+dstHost+":"+dst)
}

// CopyFiles performs a CopyFiles request (spec 11 §5.2): stage-out delivers
// the job's spool files and stage-out files to their destinations, removing
// each delivered source; stage-in fetches files before the job starts. On a
// failure the other pairs are still processed, undelivered spool files are
// moved to PBS_HOME/undelivered, and a *CopyError with the reply text is
// returned.
func (e *Engine) CopyFiles(ctx context.Context, req *CopyRequest) error {
	cc, err := e.newCopyCtx(req)
	if err != nil {
		return &CopyError{Text: err.Error()}
	}
	var text strings.Builder
	var copiedIn []string
	for _, p := range req.Pairs {
		local, err := e.localPath(cc, p)
		if err != nil {
			fmt.Fprintf(&text, "Unable to copy file %s: %v\n", p.Local, err)
			continue
		}
		remoteHost, remotePath, isLocal := e.ResolveRemote(p.Remote)
		if remotePath, err = cc.expand(remotePath); err != nil {
			fmt.Fprintf(&text, "Unable to copy file %s: %v\n", p.Remote, err)
			continue
		}
		var src, dst, shownDst string
		var args []string
		if req.Direction == STAGE_DIR_IN || req.Direction == CKPT_DIR_IN {
			src, dst, shownDst = remotePath, local, local
			if isLocal {
				args = []string{localCopyCmd, localCopyFlags, src, dst}
			} else {
				args = []string{e.conf().RcpCmd}
				args = append(args, strings.Fields(e.conf().RcpArgs)...)
				args = append(args, req.Owner+"@"+remoteHost+":"+src, dst)
			}
		} else {
			src, dst, shownDst = local, remotePath, p.Remote
			if _, err := os.Lstat(src); errors.Is(err, os.ErrNotExist) && p.Flag == STDJOBFILE {
				continue // nothing was written (e.g. joined or /dev/null)
			}
			args = e.copyCommand(req.Owner, src, remoteHost, dst, isLocal)
		}
		if isLocal && sameFile(src, dst) {
			continue
		}
		if isLocal && e.conf().AttemptToMakeDir {
			_, _ = runAsUser(ctx, cc, "/bin/mkdir", "-p", "--", filepath.Dir(dst))
		}
		out, err := e.copyWithRetry(ctx, cc, args)
		if err == nil {
			if req.Direction == STAGE_DIR_IN || req.Direction == CKPT_DIR_IN {
				copiedIn = append(copiedIn, dst)
			} else {
				_, _ = runAsUser(ctx, cc, "/bin/rm", "-rf", "--", src)
				_ = os.Remove(src) // spool files: MOM removes them itself
			}
			continue
		}
		fmt.Fprintf(&text, "Unable to copy file %s to %s\n", src, shownDst)
		text.WriteString("*** error from copy\n")
		text.WriteString(out)
		if !strings.HasSuffix(out, "\n") {
			text.WriteByte('\n')
		}
		text.WriteString("*** end error output\n")
		if req.Direction == STAGE_DIR_OUT && p.Flag == STDJOBFILE && strings.HasPrefix(src, filepath.Join(e.home, "spool")+"/") {
			kept := filepath.Join(e.home, "undelivered", filepath.Base(src))
			if err := os.Rename(src, kept); err == nil {
				fmt.Fprintf(&text, "Output retained on that host in: %s\n", kept)
			}
		}
	}
	if text.Len() == 0 {
		return nil
	}
	if req.Direction == STAGE_DIR_IN {
		for _, f := range copiedIn {
			_, _ = runAsUser(ctx, cc, "/bin/rm", "-rf", "--", f)
		}
	}
	return &CopyError{Text: strings.TrimSuffix(text.String(), "\n")}
}

// DeleteFiles performs a DelFiles request: the local files of the pairs are
// removed as the user.
func (e *Engine) DeleteFiles(ctx context.Context, req *CopyRequest) error {
	cc, err := e.newCopyCtx(req)
	if err != nil {
		return &CopyError{Text: err.Error()}
	}
	var text strings.Builder
	for _, p := range req.Pairs {
		local, err := e.localPath(cc, p)
		if err == nil {
			var out string
			out, err = runAsUser(ctx, cc, "/bin/rm", "-rf", "--", local)
			if err != nil && out != "" {
				err = errors.New(strings.TrimSpace(out))
			}
		}
		if err != nil {
			fmt.Fprintf(&text, "Unable to delete file %s: %v\n", p.Local, err)
		}
	}
	if text.Len() == 0 {
		return nil
	}
	return &CopyError{Text: strings.TrimSuffix(text.String(), "\n")}
}
