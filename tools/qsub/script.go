// This file reads the job script: its #PBS directive lines (directives,
// splitWords), the site's submit filter it goes through (submitFilter) and
// the check that it is text (textStart).

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"gopbs/pbs"
)

// directives returns the option text of the script's directive lines: the
// lines starting (after blanks) with prefix that come before the first
// executable line, with "\" continuations joined.
func directives(script []byte, prefix string) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(script))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	pending := ""
	for sc.Scan() {
		line := sc.Text()
		if pending != "" {
			line = pending + line
			pending = ""
		}
		trimmed := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(trimmed, prefix) {
			rest := trimmed[len(prefix):]
			if strings.HasSuffix(rest, "\\") {
				pending = trimmed[:len(trimmed)-1]
				continue
			}
			if rest == "" || rest[0] == ' ' || rest[0] == '\t' {
				out = append(out, strings.TrimSpace(rest))
			}
			continue
		}
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, ":") {
			continue
		}
		break
	}
	return out
}

// splitWords splits a directive's text into words, honouring quotes and
// stopping at a comment.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unmatched quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// defaultSubmitFilter is run when torque.cfg names no SUBMITFILTER.
const defaultSubmitFilter = "/usr/local/sbin/torque_submitfilter"

// submitFilter runs the site's submit filter, if any, with qsub's
// arguments and the script on its standard input; its output is the
// script to submit. It returns a non-zero exit status when the filter
// rejects the job.
func submitFilter(cfg pbs.TorqueConfig, args []string, script []byte) ([]byte, int) {
	path := cfg["SUBMITFILTER"]
	if path == "" {
		path = defaultSubmitFilter
	}
	if fi, err := os.Stat(path); err != nil || fi.IsDir() {
		return nil, 0
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Stdin = bytes.NewReader(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err == nil {
		return out, 0
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 255 {
		fmt.Fprintln(os.Stderr, "qsub: Your job has been administratively rejected by the queueing system.")
		fmt.Fprintln(os.Stderr, "qsub: There may be a more detailed explanation prior to this notice.")
		return nil, 1
	}
	fmt.Fprintln(os.Stderr, "qsub: submit filter returned an error code, aborting job submission.")
	return nil, 1
}

// textStart reports whether the first 50 bytes of a script file are
// printable characters or white space, as qsub requires of script files.
func textStart(script []byte) bool {
	for _, c := range script[:min(len(script), 50)] {
		if (c < ' ' || c > '~') && c != '\n' && c != '\t' && c != '\r' && c != '\f' && c != '\v' {
			return false
		}
	}
	return true
}
