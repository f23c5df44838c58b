package nas

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Usage is the past usage of users (SORT_BY_PAST_USAGE) and the usage of
// accounts against their allocations (ENFORCE_ALLOCATION), in node-hours:
// a job is charged its nodes times its requested walltime when it starts.
// Usage decays once per day by DECAY_FACTOR (users) and OA_DECAY_FACTOR
// (accounts).
//
// The usage file holds one item a line, '#' comments allowed:
//
//	time <unix seconds of the last decay>
//	user <name> <node-hours>
//	account <name> <node-hours>
type Usage struct {
	Users    map[string]float64
	Accounts map[string]float64
	// Stamp is when the usage was last decayed.
	Stamp time.Time
	dirty bool
}

// NewUsage returns empty usage.
func NewUsage() *Usage {
	return &Usage{Users: map[string]float64{}, Accounts: map[string]float64{}}
}

// Decay applies the daily decay factors for the time since the last
// decay.
func (u *Usage) Decay(now time.Time, userFactor, accountFactor float64) {
	if u.Stamp.IsZero() || now.Before(u.Stamp) {
		u.Stamp = now
		return
	}
	days := now.Sub(u.Stamp).Hours() / 24
	if days <= 0 {
		return
	}
	decay := func(m map[string]float64, f float64) {
		if f >= 1 {
			return
		}
		k := math.Pow(f, days)
		for name, v := range m {
			m[name] = v * k
		}
		u.dirty = true
	}
	decay(u.Users, userFactor)
	decay(u.Accounts, accountFactor)
	u.Stamp = now
}

// Charge adds node-hours to a user and an account.
func (u *Usage) Charge(user, account string, nodeHours float64) {
	if nodeHours <= 0 {
		return
	}
	u.Users[user] += nodeHours
	if account != "" {
		u.Accounts[account] += nodeHours
	}
	u.dirty = true
}

// ReadUsage reads a usage file; a missing file is empty usage.
func ReadUsage(path string) (*Usage, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return NewUsage(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	defer f.Close()
	u, err := ParseUsage(f)
	if err != nil {
		return nil, fmt.Errorf("usage file %s: %w", path, err)
	}
	return u, nil
}

// ParseUsage reads the content of a usage file.
func ParseUsage(r io.Reader) (*Usage, error) {
	u := NewUsage()
	err := eachLine(r, func(n int, fields []string) error {
		switch {
		case len(fields) == 2 && fields[0] == "time":
			sec, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return fmt.Errorf("bad time")
			}
			u.Stamp = time.Unix(sec, 0)
		case len(fields) == 3 && (fields[0] == "user" || fields[0] == "account"):
			v, err := strconv.ParseFloat(fields[2], 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return fmt.Errorf("bad usage %q", fields[2])
			}
			if fields[0] == "user" {
				u.Users[fields[1]] = v
			} else {
				u.Accounts[fields[1]] = v
			}
		default:
			return fmt.Errorf("expected 'time <seconds>', 'user <name> <node-hours>' or 'account <name> <node-hours>'")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// Save writes the usage file atomically (a temporary file renamed over
// it) if the usage changed since it was read or saved.
func (u *Usage) Save(path string) error {
	if !u.dirty {
		return nil
	}
	var b strings.Builder
	b.WriteString("# past usage of the NAS scheduler, node-hours\n")
	fmt.Fprintf(&b, "time %d\n", u.Stamp.Unix())
	write := func(kind string, m map[string]float64) {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(&b, "%s %s %s\n", kind, n, strconv.FormatFloat(m[n], 'g', -1, 64))
		}
	}
	write("user", u.Users)
	write("account", u.Accounts)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".usage-*")
	if err != nil {
		return fmt.Errorf("save usage: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return fmt.Errorf("save usage: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save usage: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save usage: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save usage: %w", err)
	}
	u.dirty = false
	return nil
}

// Allocations are the node-hours each account may use
// (SCHED_ACCT_DIR/allocations). The file holds "<account> <node-hours>"
// lines, '#' comments allowed; the account "default" applies to accounts
// without a line of their own. A job's account is its Account_Name, or
// else its group.
type Allocations map[string]float64

// DefaultAccount names the allocation of accounts not listed.
const DefaultAccount = "default"

// ReadAllocations reads an allocations file.
func ReadAllocations(path string) (Allocations, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read allocations: %w", err)
	}
	defer f.Close()
	a, err := ParseAllocations(f)
	if err != nil {
		return nil, fmt.Errorf("allocations file %s: %w", path, err)
	}
	return a, nil
}

// ParseAllocations reads the content of an allocations file.
func ParseAllocations(r io.Reader) (Allocations, error) {
	a := Allocations{}
	err := eachLine(r, func(n int, fields []string) error {
		if len(fields) != 2 {
			return fmt.Errorf("expected '<account> <node-hours>'")
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return fmt.Errorf("bad allocation %q", fields[1])
		}
		a[fields[0]] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Of returns the allocation of account; ok is false when neither the
// account nor "default" has one.
func (a Allocations) Of(account string) (float64, bool) {
	if v, ok := a[account]; ok {
		return v, true
	}
	v, ok := a[DefaultAccount]
	return v, ok
}

// eachLine calls fn with the fields of each line that is not blank or a
// comment; an error names the line.
func eachLine(r io.Reader, fn func(n int, fields []string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if err := fn(n, fields); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}
