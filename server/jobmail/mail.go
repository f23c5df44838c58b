package server

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"

	pbsattr "gopbs/attr"
	"gopbs/internal/logline"
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

const defaultMailProgram = "sendmail"

// mail is one message ready to be piped to the mail program.
type mail struct {
	point   byte
	from    string
	to      string
	content string
}

// mailJob decides whether the owner gets mail for a job event (mail
// point letter, forced or not, detail text) and returns it, logging the
// refusal as TORQUE does. Called with s.mu held; send the result with
// sendMail once the lock is released.
func (s *Server) mailJob(j *state.Job, point byte, forced bool, detail string) *mail {
	if s.attrs.Get(pbsattr.SrvMailDomain) == "never" {
		return nil
	}
	points, set := j.Attrs.LookupRes(pbsattr.JobMailPoints, "")
	wanted := strings.IndexByte(points, point) >= 0 && !strings.Contains(points, "n")
	if !set && point == 'a' {
		wanted = true
	}
	if forced && !s.serverFlag(pbsattr.SrvNoMailForce) {
		wanted = true
	}
	if !wanted {
		s.log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, j.ID, "Not sending email: User does not want mail of this type.")
		return nil
	}
	var to string
	if users := state.ParseArst(j.Attrs.Get(pbsattr.JobMailUsers)); len(users) > 0 {
		to = strings.Join(users, " ") + " "
	} else if d := s.attrs.Get(pbsattr.SrvMailDomain); d != "" {
		to = j.Attrs.Get(pbsattr.JobEuser) + "@" + d
	} else {
		to = j.Owner()
	}
	from := s.attrs.Get(pbsattr.SrvMailFrom)
	if from == "" {
		from = "adm"
	}
	subjFmt := s.attrs.Get(pbsattr.SrvMailSubjectFmt)
	if subjFmt == "" {
		subjFmt = "PBS JOB %i"
	}
	bodyFmt := s.attrs.Get(pbsattr.SrvMailBodyFmt)
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
		return expandMailFormat(f, map[byte]string{'d': detail, 'h': j.Attrs.Get(pbsattr.JobExecHost), 'i': j.ID, 'j': j.Name(), 'm': msg, 'r': detail})
	}
	content := "To: " + to + "\nSubject: " + expand(subjFmt) + "\nPrecedence: bulk\n\n" + expand(bodyFmt)
	return &mail{point: point, from: from, to: to, content: content}
}

// expandMailFormat substitutes %x codes and backslash escapes.
func expandMailFormat(f string, codes map[byte]string) string {
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

// sendMail pipes a mail to "<mail program> -f <from> <to>" and logs a
// failure (spec 12 §15.2). Nil mails are ignored.
func (s *Server) sendMail(jobID string, m *mail) {
	if m == nil {
		return
	}
	prog := s.run.mailProgram
	cmdline := prog + " -f " + m.from + " " + strings.TrimSpace(m.to)
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Stdin = strings.NewReader(m.content)
	err := cmd.Run()
	if err == nil {
		return
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	s.log.Log(logline.EventError|logline.EventAdmin|logline.EventJob, logline.ClassJob, jobID,
		fmt.Sprintf("Email '%c' to %s failed: Child process '%s' returned %d (errno 10:No child processes)", m.point, strings.TrimSpace(m.to), cmdline, code))
}
