package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopbs/pbs"
)

// ParseDateTime converts qsub's -a operand [[[[CC]YY]MM]DD]hhmm[.SS] to
// epoch seconds in local time. Fields left out are taken from now; when
// the result is in the past the next occurrence of that time (next day,
// month or year, depending on what was left out) is used.
func ParseDateTime(s string, now time.Time) (int64, error) {
	bad := fmt.Errorf("illegal -a value")
	main, secs, hasSecs := strings.Cut(s, ".")
	sec := 0
	if hasSecs {
		if len(secs) != 2 {
			return 0, bad
		}
		v, err := strconv.Atoi(secs)
		if err != nil || v > 61 {
			return 0, bad
		}
		sec = v
	}
	for _, c := range main {
		if c < '0' || c > '9' {
			return 0, bad
		}
	}
	num := func(i int) int { v, _ := strconv.Atoi(main[i : i+2]); return v }
	if len(main) < 4 || len(main) > 12 || len(main)%2 != 0 {
		return 0, bad
	}
	n := len(main)
	year, month, day := now.Year(), int(now.Month()), now.Day()
	hour, min := num(n-4), num(n-2)
	switch n {
	case 12:
		year = num(0)*100 + num(2)
		month, day = num(4), num(6)
	case 10:
		year = 2000 + num(0)
		month, day = num(2), num(4)
	case 8:
		month, day = num(0), num(2)
	case 6:
		day = num(0)
	}
	if hour > 23 || min > 59 || month < 1 || month > 12 || day < 1 || day > 31 {
		return 0, bad
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, 0, now.Location())
	if t.Before(now) {
		switch n {
		case 4:
			t = t.AddDate(0, 0, 1)
		case 6:
			t = t.AddDate(0, 1, 0)
		case 8:
			t = t.AddDate(1, 0, 0)
		}
	}
	return t.Unix(), nil
}

// HostName returns the name qsub puts in paths: torque.cfg's QSUBHOST, or
// the host name of this machine.
func HostName() string {
	if h := TorqueConfig()["QSUBHOST"]; h != "" {
		return h
	}
	h, err := os.Hostname()
	if err != nil {
		return "localhost"
	}
	return h
}

// QualifyPath turns an -o/-e operand into "host:/absolute/path".
func QualifyPath(p string) string {
	host, path, ok := strings.Cut(p, ":")
	if !ok {
		host, path = HostName(), p
	}
	if strings.HasPrefix(path, "$HOME") || strings.HasPrefix(path, "${HOME}") {
		rest := strings.TrimPrefix(strings.TrimPrefix(path, "${HOME}"), "$HOME")
		path = os.Getenv("HOME") + rest
	}
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(WorkDir(), path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() && !strings.HasSuffix(path, "/") {
		path += "/"
	}
	return host + ":" + path
}

// WorkDir returns the current directory: $PWD if it names it, else the
// directory as the system reports it.
func WorkDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	if pwd := os.Getenv("PWD"); pwd != "" {
		if a, err1 := os.Stat(pwd); err1 == nil {
			if b, err2 := os.Stat(wd); err2 == nil && os.SameFile(a, b) {
				return pwd
			}
		}
	}
	return wd
}

// ResourceList splits a -l operand "res=value,res2=value" into
// Resource_List entries, in the order written. A value may be quoted
// with ' or " to hold commas (spec 04 §9); the quotes stay in the value.
func ResourceList(s string) []pbs.Attr {
	var out []pbs.Attr
	for _, item := range splitResources(s) {
		if item == "" {
			continue
		}
		name, val, _ := strings.Cut(item, "=")
		out = append(out, pbs.Attr{Name: "Resource_List", Resource: name, Value: val})
	}
	return out
}

// splitResources splits a -l (or -v) operand at the commas outside
// quotes.
func splitResources(s string) []string {
	var items []string
	start := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ',':
			items = append(items, s[start:i])
			start = i + 1
		}
	}
	return append(items, s[start:])
}

// EscapeEnvValue backslash-escapes the characters of an environment value
// that would break a Variable_List: quotes, backslash, newline and comma.
func EscapeEnvValue(v string) string {
	if !strings.ContainsAny(v, "\"'\\\n,") {
		return v
	}
	var b strings.Builder
	for _, c := range v {
		if strings.ContainsRune("\"'\\\n,", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// VariableListFromV converts a -v operand "A=1,B,C=x" into list elements;
// a name without a value takes the value from the environment. A value
// may hold commas inside quotes; values are escaped (EscapeEnvValue), so
// such a comma is sent as "\," (spec 04 §5.2).
func VariableListFromV(s string) []string {
	var out []string
	for _, item := range splitResources(s) {
		if item == "" {
			continue
		}
		name, val, ok := strings.Cut(item, "=")
		if !ok {
			v, set := os.LookupEnv(name)
			if !set {
				continue
			}
			val = v
		}
		out = append(out, name+"="+EscapeEnvValue(val))
	}
	return out
}

// WAttrs converts a -W operand "k=v[,k=v...]" of qsub and qalter into
// attributes (spec 05 §2.2): depend's job ids are qualified with the
// default server, t= is job_array_request, a leading 0 makes umask octal
// (sent in decimal), fault_tolerant becomes TRUE or FALSE, any other key
// is sent as the attribute of that name, and an item without "=" is
// "x=<item>".
func WAttrs(s string) ([]pbs.Attr, error) {
	var out []pbs.Attr
	for _, item := range splitW(s) {
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			k, v = "x", item
		}
		switch k {
		case "depend":
			out = append(out, pbs.Attr{Name: "depend", Value: expandDepend(v)})
		case "t":
			out = append(out, pbs.Attr{Name: "job_array_request", Value: v})
		case "umask":
			n, err := strconv.ParseInt(v, 0, 32)
			if err != nil {
				return nil, fmt.Errorf("illegal -W value")
			}
			if strings.HasPrefix(v, "0") {
				n, _ = strconv.ParseInt(v, 8, 32)
			}
			out = append(out, pbs.Attr{Name: "umask", Value: strconv.FormatInt(n, 10)})
		case "fault_tolerant":
			val := "FALSE"
			if v != "" && strings.ContainsRune("tTyY1", rune(v[0])) {
				val = "TRUE"
			}
			out = append(out, pbs.Attr{Name: "fault_tolerant", Value: val})
		default:
			out = append(out, pbs.Attr{Name: k, Value: v})
		}
	}
	return out, nil
}

// splitW splits at commas that start a new "key=" item, so that values
// such as stage lists keep their own commas.
func splitW(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		k, _, hasEq := strings.Cut(part, "=")
		if len(out) > 0 && (!hasEq || strings.ContainsAny(k, "@:/")) {
			out[len(out)-1] += "," + part
			continue
		}
		out = append(out, part)
	}
	return out
}

// expandDepend normalises the job ids of a dependency list as job id
// operands are (pbs.ResolveJobID): "afterok:12" becomes
// "afterok:12.<full name of the default server>"; an id that cannot be
// resolved is sent as written.
func expandDepend(v string) string {
	deps := strings.Split(v, ",")
	for i, d := range deps {
		parts := strings.Split(d, ":")
		if len(parts) < 2 || parts[0] == "synccount" || parts[0] == "on" {
			continue
		}
		for k := 1; k < len(parts); k++ {
			id := parts[k]
			if id == "" || id[0] < '0' || id[0] > '9' || strings.Contains(id, "@") {
				continue // "id@server" is sent as written (spec 04 §5.6)
			}
			if j, err := pbs.ResolveJobID(id); err == nil {
				parts[k] = j.Qualified()
			}
		}
		deps[i] = strings.Join(parts, ":")
	}
	return strings.Join(deps, ",")
}
