package classad

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ctxVar is the hidden first argument of every function call: the
// evaluation's Env.
const ctxVar = "__env"

// Env is what the functions of an evaluation see.
type Env struct {
	// Now is the time time() returns.
	Now time.Time
	// RsvUtil answers plus_rsvutil(owner, start, end): the number of
	// reservations of owner in the window, their total duration in
	// seconds and their node-hours. Nil makes plus_rsvutil an error.
	RsvUtil func(owner string, start, end int64) (count int, seconds int64, nodeHours float64)
}

type function struct {
	min, max int
	fn       func(env *Env, args []any) (any, error)
}

func (f function) arity() string {
	switch {
	case f.min == f.max && f.min == 1:
		return "1 argument"
	case f.min == f.max:
		return fmt.Sprintf("%d arguments", f.min)
	}
	return fmt.Sprintf("%d to %d arguments", f.min, f.max)
}

// functions are the ClassAd functions the reader knows: a useful part of
// ClassAd's built-ins, and PluS's own (linear, quadratic, plus_rsvutil;
// seed §3.4.5).
var functions = map[string]function{
	"member":       {2, 2, fnMember},
	"size":         {1, 1, fnSize},
	"reltime":      {1, 1, fnRelTime},
	"abstime":      {1, 1, fnAbsTime},
	"time":         {0, 0, func(env *Env, _ []any) (any, error) { return int(env.Now.Unix()), nil }},
	"linear":       {5, 5, fnLinear},
	"quadratic":    {5, 5, fnQuadratic},
	"plus_rsvutil": {3, 3, fnRsvUtil},
	"strcat":       {0, 64, fnStrcat},
	"toupper":      {1, 1, strFunc(strings.ToUpper)},
	"tolower":      {1, 1, strFunc(strings.ToLower)},
	"int":          {1, 1, fnInt},
	"real":         {1, 1, fnReal},
	"floor":        {1, 1, roundFunc(math.Floor)},
	"ceiling":      {1, 1, roundFunc(math.Ceil)},
	"round":        {1, 1, roundFunc(math.Round)},
	"ifthenelse":   {3, 3, fnIfThenElse},
	"isstring":     {1, 1, func(_ *Env, a []any) (any, error) { _, ok := a[0].(string); return ok, nil }},
	"islist":       {1, 1, func(_ *Env, a []any) (any, error) { _, ok := a[0].([]any); return ok, nil }},
}

// errArg is wrapped by the errors of functions given the wrong kind of
// argument.
var errArg = errors.New("bad argument")

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func floats(name string, args []any) ([]float64, error) {
	out := make([]float64, len(args))
	for i, a := range args {
		f, ok := toFloat(a)
		if !ok {
			return nil, fmt.Errorf("%s: argument %d is %T, not a number: %w", name, i+1, a, errArg)
		}
		out[i] = f
	}
	return out, nil
}

func fnMember(_ *Env, a []any) (any, error) {
	list, ok := a[1].([]any)
	if !ok {
		return nil, fmt.Errorf("member: second argument is %T, not a list: %w", a[1], errArg)
	}
	for _, v := range list {
		if equal(a[0], v) {
			return true, nil
		}
	}
	return false, nil
}

// equal compares two scalar values; numbers compare by value.
func equal(x, y any) bool {
	if fx, ok := toFloat(x); ok {
		fy, ok := toFloat(y)
		return ok && fx == fy
	}
	switch xv := x.(type) {
	case string:
		yv, ok := y.(string)
		return ok && xv == yv
	case bool:
		yv, ok := y.(bool)
		return ok && xv == yv
	}
	return false
}

func fnSize(_ *Env, a []any) (any, error) {
	switch x := a[0].(type) {
	case []any:
		return len(x), nil
	case string:
		return len(x), nil
	case map[string]any:
		return len(x), nil
	}
	return nil, fmt.Errorf("size: argument is %T, not a list or string: %w", a[0], errArg)
}

// ParseRelTime reads relTime's argument: seconds ("90"), [D+]HH:MM[:SS]
// ("00:30:00", "1+02:00:00"), or numbers with units d, h, m, s ("7d",
// "1h30m"); a leading "-" negates.
func ParseRelTime(s string) (int64, error) {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(t, "-")
	bad := fmt.Errorf("relTime(%q): want seconds, [D+]HH:MM[:SS] or 1d2h3m4s: %w", s, errArg)
	if t == "" {
		return 0, bad
	}
	var total int64
	add := func(n, unit int64) bool {
		if n > math.MaxInt64/unit/2 || total > math.MaxInt64/2 {
			return false
		}
		total += n * unit
		return true
	}
	if strings.Contains(t, ":") {
		days := int64(0)
		if d, rest, ok := strings.Cut(t, "+"); ok {
			n, err := strconv.ParseInt(d, 10, 32)
			if err != nil || n < 0 {
				return 0, bad
			}
			days, t = n, rest
		}
		f := strings.Split(t, ":")
		if len(f) > 3 {
			return 0, bad
		}
		units := []int64{3600, 60, 1}
		for i, p := range f {
			n, err := strconv.ParseInt(p, 10, 32)
			if err != nil || n < 0 || p[0] == '+' || (i > 0 && n > 59) {
				return 0, bad
			}
			if !add(n, units[i]) {
				return 0, bad
			}
		}
		if !add(days, 86400) {
			return 0, bad
		}
	} else {
		for t != "" {
			i := 0
			for i < len(t) && t[i] >= '0' && t[i] <= '9' {
				i++
			}
			if i == 0 || i > 12 {
				return 0, bad
			}
			n, _ := strconv.ParseInt(t[:i], 10, 64)
			unit := int64(1)
			t = t[i:]
			if t != "" {
				switch t[0] | 0x20 {
				case 'd':
					unit = 86400
				case 'h':
					unit = 3600
				case 'm':
					unit = 60
				case 's':
				default:
					return 0, bad
				}
				t = t[1:]
			}
			if !add(n, unit) {
				return 0, bad
			}
		}
	}
	if neg {
		total = -total
	}
	return total, nil
}

func fnRelTime(_ *Env, a []any) (any, error) {
	switch x := a[0].(type) {
	case string:
		n, err := ParseRelTime(x)
		return int(n), err
	case int, int64, float64:
		f, _ := toFloat(x)
		return int(f), nil
	}
	return nil, fmt.Errorf("relTime: argument is %T: %w", a[0], errArg)
}

func fnAbsTime(_ *Env, a []any) (any, error) {
	switch x := a[0].(type) {
	case string:
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02"} {
			if t, err := time.ParseInLocation(layout, x, time.Local); err == nil {
				return int(t.Unix()), nil
			}
		}
		return nil, fmt.Errorf("absTime(%q): want an ISO 8601 time: %w", x, errArg)
	case int, int64, float64:
		f, _ := toFloat(x)
		return int(f), nil
	}
	return nil, fmt.Errorf("absTime: argument is %T: %w", a[0], errArg)
}

// fnLinear is PluS's linear(x, x1, y1, x2, y2): the line through (x1, y1)
// and (x2, y2) at x.
func fnLinear(_ *Env, a []any) (any, error) {
	f, err := floats("linear", a)
	if err != nil {
		return nil, err
	}
	x, x1, y1, x2, y2 := f[0], f[1], f[2], f[3], f[4]
	if x1 == x2 {
		return nil, fmt.Errorf("linear: x1 and x2 are both %v: %w", x1, errArg)
	}
	return y1 + (x-x1)*(y2-y1)/(x2-x1), nil
}

// fnQuadratic is PluS's quadratic(x, x1, y1, x2, y2), used "in the same
// way" as linear (seed §3.4.5.2): the parabola with its vertex at (x1,
// y1) through (x2, y2).
func fnQuadratic(_ *Env, a []any) (any, error) {
	f, err := floats("quadratic", a)
	if err != nil {
		return nil, err
	}
	x, x1, y1, x2, y2 := f[0], f[1], f[2], f[3], f[4]
	if x1 == x2 {
		return nil, fmt.Errorf("quadratic: x1 and x2 are both %v: %w", x1, errArg)
	}
	u := (x - x1) / (x2 - x1)
	return y1 + (y2-y1)*u*u, nil
}

func fnRsvUtil(env *Env, a []any) (any, error) {
	owner, ok := a[0].(string)
	if !ok {
		return nil, fmt.Errorf("plus_rsvutil: owner is %T, not a string: %w", a[0], errArg)
	}
	f, err := floats("plus_rsvutil", a[1:])
	if err != nil {
		return nil, err
	}
	if env.RsvUtil == nil {
		return nil, errors.New("plus_rsvutil: no reservation usage is known here")
	}
	n, sec, nh := env.RsvUtil(owner, int64(f[0]), int64(f[1]))
	return []any{n, int(sec), nh}, nil
}

func fnStrcat(_ *Env, a []any) (any, error) {
	var b strings.Builder
	for _, v := range a {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
		default:
			fmt.Fprint(&b, x)
		}
	}
	return b.String(), nil
}

func strFunc(f func(string) string) func(*Env, []any) (any, error) {
	return func(_ *Env, a []any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, fmt.Errorf("argument is %T, not a string: %w", a[0], errArg)
		}
		return f(s), nil
	}
}

func fnInt(_ *Env, a []any) (any, error) {
	switch x := a[0].(type) {
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return nil, fmt.Errorf("int(%q): %w", x, errArg)
		}
		return n, nil
	}
	f, err := floats("int", a)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(f[0]) || math.Abs(f[0]) > math.MaxInt64/2 {
		return nil, fmt.Errorf("int(%v): out of range: %w", f[0], errArg)
	}
	return int(f[0]), nil
}

func fnReal(_ *Env, a []any) (any, error) {
	if s, ok := a[0].(string); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("real(%q): %w", s, errArg)
		}
		return f, nil
	}
	f, err := floats("real", a)
	if err != nil {
		return nil, err
	}
	return f[0], nil
}

func roundFunc(r func(float64) float64) func(*Env, []any) (any, error) {
	return func(_ *Env, a []any) (any, error) {
		f, err := floats("round", a)
		if err != nil {
			return nil, err
		}
		v := r(f[0])
		if math.IsNaN(v) || math.Abs(v) > math.MaxInt64/2 {
			return nil, fmt.Errorf("%v out of range: %w", f[0], errArg)
		}
		return int(v), nil
	}
}

func fnIfThenElse(_ *Env, a []any) (any, error) {
	c, ok := a[0].(bool)
	if !ok {
		return nil, fmt.Errorf("ifThenElse: condition is %T, not a boolean: %w", a[0], errArg)
	}
	if c {
		return a[1], nil
	}
	return a[2], nil
}
