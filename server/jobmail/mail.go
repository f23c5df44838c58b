// Package jobmail writes and sends the mail pbs_server sends a job's
// owner (spec 12 §15): whether a mail point is wanted, the message built
// from the server's mail attributes, and its piping to the mail program.
package jobmail

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/internal/logline"
	"gopbs/server/pbslog"
	"gopbs/server/state"
)

// Standard mail messages per mail point (spec 12 §15.2).
var mailMessages = map[byte]string{
	'a': "Aborted by PBS Server ",
	'b': "Begun execution",
	'e': "Execution terminated",
	'd': "job deleted",
	's': "File stage in failed, see below.\nJob will be retried later, please investigate and correct problem.",
	'c': "Checkpoint file copy failed, see below.\nJob will be retried later, please investigate and correct problem.",
}

// DefaultProgram is the mail program a Mailer runs unless told another.
const DefaultProgram = "sendmail"

// Mailer composes and sends job mail.
type Mailer struct {
	// Program is the sendmail command (tests replace it).
	Program string
	// Log receives the lines on mail not sent.
	Log *pbslog.Logger
}

// New returns a Mailer running DefaultProgram that logs to log.
func New(log *pbslog.Logger) *Mailer { return &Mailer{Program: DefaultProgram, Log: log} }

// Mail is one message ready to be piped to the mail program.
type Mail struct {
	point   byte
	from    string
	to      string
	content string
}

// Compose decides whether the owner gets mail for a job event (mail
// point letter, forced or not, detail text) under the server's
// attributes srv and returns it (nil: none), logging the refusal as
// TORQUE does. Called with the server's lock held; send the result with
// Send once the lock is released.
func (m *Mailer) Compose(srv state.Attrs, j *state.Job, point byte, forced bool, detail string) *Mail {
	if srv.Get(pbsattr.SrvMailDomain) == "never" {
		return nil
	}
	points, set := j.Attrs.LookupRes(pbsattr.JobMailPoints, "")
	wanted := strings.IndexByte(points, point) >= 0 && !strings.Contains(points, "n")
	if !set && point == 'a' {
		wanted = true
	}
	if forced && !state.IsTrue(srv.Get(pbsattr.SrvNoMailForce)) {
		wanted = true
	}
	if !wanted {
		m.Log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, j.ID, "Not sending email: User does not want mail of this type.")
		return nil
	}
	var to string
	if users := state.ParseArst(j.Attrs.Get(pbsattr.JobMailUsers)); len(users) > 0 {
		to = strings.Join(users, " ") + " "
	} else if d := srv.Get(pbsattr.SrvMailDomain); d != "" {
		to = j.Attrs.Get(pbsattr.JobEuser) + "@" + d
	} else {
		to = j.Owner()
	}
	from := srv.Get(pbsattr.SrvMailFrom)
	if from == "" {
		from = "adm"
	}
	subjFmt := srv.Get(pbsattr.SrvMailSubjectFmt)
	if subjFmt == "" {
		subjFmt = "PBS JOB %i"
	}
	bodyFmt := srv.Get(pbsattr.SrvMailBodyFmt)
	if bodyFmt == "" {
		bodyFmt = "PBS Job Id: %i\nJob Name:   %j\n"
		if j.Attrs.Get(pbsattr.JobExecHost) != "" {
			bodyFmt += "Exec host:  %h\n"
		}
		bodyFmt += "%m\n"
		if detail != "" {
			bodyFmt += "%d\n"
		}
	}
	msg, ok := mailMessages[point]
	if !ok {
		msg = "An error has occurred processing your job, see below."
	}
	expand := func(f string) string {
		return expandFormat(f, map[byte]string{'d': detail, 'h': j.Attrs.Get(pbsattr.JobExecHost), 'i': j.ID, 'j': j.Name(), 'm': msg, 'r': detail})
	}
	content := "To: " + to + "\nSubject: " + expand(subjFmt) + "\nPrecedence: bulk\n\n" + expand(bodyFmt)
	return &Mail{point: point, from: from, to: to, content: content}
}

// expandFormat substitutes the %x codes of a mail format (codes maps x
// to its text) and its backslash escapes.
func expandFormat(f string, codes map[byte]string) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		ch := f[i]
		switch {
		case ch == '%' && i+1 < len(f):
			if v, ok := codes[f[i+1]]; ok {
				b.WriteString(v)
				i++
				continue
			}
		case ch == '\\' && i+1 < len(f):
			if r, ok := map[byte]byte{'n': '\n', 't': '\t', '\\': '\\', '\'': '\'', '"': '"'}[f[i+1]]; ok {
				b.WriteByte(r)
				i++
				continue
			}
		}
		b.WriteByte(ch)
	}
	return b.String()
}

// Send pipes a mail of job jobID to "<mail program> -f <from> <to>" and
// logs a failure (spec 12 §15.2). A nil mail is ignored.
func (m *Mailer) Send(jobID string, ml *Mail) {
	if ml == nil {
		return
	}
	cmdline := m.Program + " -f " + ml.from + " " + strings.TrimSpace(ml.to)
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Stdin = strings.NewReader(ml.content)
	err := cmd.Run()
	if err == nil {
		return
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	m.Log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, jobID,
		fmt.Sprintf("Email '%c' to %s failed: Child process '%s' returned %d (errno 10:No child processes)", ml.point, strings.TrimSpace(ml.to), cmdline, code))
}
