package classad

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// Ad is a parsed and compiled ClassAd. Attribute names are
// case-insensitive, as in ClassAds. An Ad is read-only after Parse and
// safe for concurrent evaluations.
type Ad struct {
	attrs  []*Attr
	byName map[string]*Attr
	progs  map[string]*vm.Program
}

// compileOptions registers the functions with the evaluator.
var compileOptions = func() []expr.Option {
	var opts []expr.Option
	names := make([]string, 0, len(functions))
	for name := range functions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := functions[name]
		opts = append(opts, expr.Function("fn_"+name, func(params ...any) (any, error) {
			env, ok := params[0].(*Env)
			if !ok {
				return nil, errors.New("internal: no evaluation environment")
			}
			return f.fn(env, params[1:])
		}))
	}
	return opts
}()

// Parse reads a ClassAd, "[ name = expression; ... ]", and compiles each
// expression. Comments (//, /* */, #) are allowed. Expressions have
// ClassAd's operators (?:, ||, &&, == != =?= =!=, < <= > >=, + -, * / %,
// unary ! - +), attribute references, record fields (r.name), list
// subscripts (l[0]), list literals ({"a", "b"}) and the functions listed
// in the package's functions table (member, size, relTime, absTime,
// time, linear, quadratic, plus_rsvutil, strcat, toUpper, toLower, int,
// real, floor, ceiling, round, ifThenElse, isString, isList). Strings
// compare case-sensitively; UNDEFINED and ERROR literals and nested
// records are refused.
func Parse(src string) (*Ad, error) {
	attrs, err := parseAd(src)
	if err != nil {
		return nil, err
	}
	ad := &Ad{attrs: attrs, byName: map[string]*Attr{}, progs: map[string]*vm.Program{}}
	for _, a := range attrs {
		lower := strings.ToLower(a.Name)
		prog, err := expr.Compile(a.expr, compileOptions...)
		if err != nil {
			return nil, &SyntaxError{Line: a.Line, Msg: fmt.Sprintf("attribute %s: %v", a.Name, firstLine(err.Error()))}
		}
		ad.byName[lower] = a
		ad.progs[lower] = prog
	}
	return ad, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Attrs returns the attributes in file order.
func (ad *Ad) Attrs() []*Attr { return ad.attrs }

// Has reports whether the ad defines name.
func (ad *Ad) Has(name string) bool { _, ok := ad.byName[strings.ToLower(name)]; return ok }

// Check verifies that every attribute reference resolves, to another
// attribute of the ad or to one of the external variables (supplied at
// evaluation), and that no attribute depends on itself.
func (ad *Ad) Check(external ...string) error {
	ext := map[string]bool{}
	for _, e := range external {
		ext[strings.ToLower(e)] = true
	}
	for _, a := range ad.attrs {
		if ext[strings.ToLower(a.Name)] {
			return &SyntaxError{Line: a.Line, Msg: fmt.Sprintf("attribute %s is set by the evaluator and cannot be defined", a.Name)}
		}
		for _, r := range a.refs {
			if _, ok := ad.byName[r]; !ok && !ext[r] {
				return &SyntaxError{Line: a.Line, Msg: fmt.Sprintf("attribute %s refers to %s, which is not defined", a.Name, r)}
			}
		}
	}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		switch state[name] {
		case 1:
			cycle := append(path[slices.Index(path, name):], name)
			return &SyntaxError{Line: ad.byName[name].Line, Msg: "attributes refer to each other in a cycle: " + strings.Join(cycle, " -> ")}
		case 2:
			return nil
		}
		state[name] = 1
		for _, r := range ad.byName[name].refs {
			if _, ok := ad.byName[r]; ok {
				if err := visit(r, append(path, name)); err != nil {
					return err
				}
			}
		}
		state[name] = 2
		return nil
	}
	for _, a := range ad.attrs {
		if err := visit(strings.ToLower(a.Name), nil); err != nil {
			return err
		}
	}
	return nil
}

// EvalError is an attribute whose evaluation failed.
type EvalError struct {
	Attr string
	Err  error
}

func (e *EvalError) Error() string { return fmt.Sprintf("evaluating %s: %v", e.Attr, e.Err) }
func (e *EvalError) Unwrap() error { return e.Err }

// Eval evaluates attribute name with the external variables vars (names
// case-insensitive; values: bool, int, int64, float64, string, []any of
// those, or map[string]any records with lower-case field names) and the
// environment env. Referenced attributes are evaluated first, each once.
func (ad *Ad) Eval(name string, vars map[string]any, env *Env) (any, error) {
	e := &evaluation{ad: ad, vars: map[string]any{ctxVar: env}, state: map[string]int{}}
	for k, v := range vars {
		e.vars["v_"+strings.ToLower(k)] = v
		e.state[strings.ToLower(k)] = 2
	}
	return e.eval(strings.ToLower(name))
}

type evaluation struct {
	ad    *Ad
	vars  map[string]any
	state map[string]int
}

func (e *evaluation) eval(name string) (any, error) {
	switch e.state[name] {
	case 1:
		return nil, &EvalError{Attr: name, Err: errors.New("refers to itself")}
	case 2:
		return e.vars["v_"+name], nil
	}
	a, ok := e.ad.byName[name]
	if !ok {
		return nil, &EvalError{Attr: name, Err: errors.New("not defined")}
	}
	e.state[name] = 1
	for _, r := range a.refs {
		if _, err := e.eval(r); err != nil {
			return nil, err
		}
	}
	v, err := expr.Run(e.ad.progs[name], e.vars)
	if err != nil {
		return nil, &EvalError{Attr: a.Name, Err: errors.New(firstLine(err.Error()))}
	}
	e.vars["v_"+name] = v
	e.state[name] = 2
	return v, nil
}
