package classad

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func eval(t *testing.T, src, attr string, vars map[string]any) (any, error) {
	t.Helper()
	ad, err := Parse(src)
	if err != nil {
		return nil, err
	}
	var ext []string
	for k := range vars {
		ext = append(ext, k)
	}
	if err := ad.Check(ext...); err != nil {
		return nil, err
	}
	return ad.Eval(attr, vars, &Env{Now: time.Unix(1000, 0)})
}

func TestExpressions(t *testing.T) {
	rec := map[string]any{"name": "n1", "loadavg": 0.25, "isalive": true, "props": []any{"a", "b"}}
	vars := map[string]any{"Node": rec, "Owner": "alice", "L": []any{int64(3), int64(5)}}
	tests := []struct {
		expr string
		want any
	}{
		{"1 + 2 * 3", 7},
		{"(1 + 2) * 3", 9},
		{"10 - 4 - 3", 3},
		{"7 % 4", 3},
		{"1 / 4", 0.25},
		{"-2 * -3", 6},
		{"+4", 4},
		{"2.5e1 + .5", 25.5},
		{"1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 4 == false", true},
		{"true || false && false", true},
		{"!(1 == 1) || 2 != 2", false},
		{"1 =?= 1 && 1 =!= 2", true},
		{"true ? 1 : false ? 2 : 3", 1},
		{"false ? 1 : false ? 2 : 3", 3},
		{"1 > 2 ? \"yes\" : \"no\"", "no"},
		{`"a\"b\\c\n"`, "a\"b\\c\n"},
		{"Node.name", "n1"},
		{"NODE.NAME", "n1"},
		{"node.LoadAvg <= 0.3 && Node.isAlive", true},
		{"Node.props[1]", "b"},
		{"L[0] + L[1]", 8},
		{"{1, 2, 3}[2]", 3},
		{"size({})", 0},
		{"size({\"x\", \"y\"})", 2},
		{"size(Node.props)", 2},
		{"size(\"abcd\")", 4},
		{"member(Owner, {\"bob\", \"alice\"})", true},
		{"member(\"Alice\", {\"alice\"})", false},
		{"member(3, L)", true},
		{"member(3.0, {3})", true},
		{"relTime(\"00:30:00\")", 1800},
		{"relTime(\"1+02:00:00\")", 93600},
		{"relTime(\"7d\")", 604800},
		{"relTime(\"1h30m\")", 5400},
		{"relTime(\"0\")", 0},
		{"relTime(\"-10\")", -10},
		{"absTime(time())", 1000},
		{"time() + relTime(\"1m\")", 1060},
		{"linear(5, 0, 0, 10, 100)", 50.0},
		{"linear(15, 10, 1, 20, 3)", 2.0},
		{"quadratic(5, 0, 0, 10, 100)", 25.0},
		{"strcat(\"a\", 1, \"b\")", "a1b"},
		{"toUpper(Owner)", "ALICE"},
		{"int(2.9) + int(\"4\")", 6},
		{"real(3)", 3.0},
		{"floor(2.5) + ceiling(2.5) + round(2.4)", 7},
		{"ifThenElse(1 < 2, \"a\", \"b\")", "a"},
		{"isString(Owner) && !isList(Owner) && isList(L)", true},
		{"/* comment */ 1 // trailing\n + 1 # another\n", 2},
	}
	for _, tc := range tests {
		got, err := eval(t, "[ X = "+tc.expr+" ]", "x", vars)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %#v, %v; want %#v", tc.expr, got, err, tc.want)
		}
	}
}

func TestReferences(t *testing.T) {
	src := `[
		a = b + c;   // refers forward
		B = C * 2;
		c = base + 1;
	]`
	got, err := eval(t, src, "A", map[string]any{"base": 1})
	if err != nil || got != 6 {
		t.Errorf("a = %v, %v", got, err)
	}
	ad, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := ad.Check(); err == nil || err.Error() != "line 4: attribute c refers to base, which is not defined" {
		t.Errorf("Check without base: %v", err)
	}
	if len(ad.Attrs()) != 3 || ad.Attrs()[1].Name != "B" || ad.Attrs()[1].Src != "C * 2" || !ad.Has("b") || ad.Has("base") {
		t.Errorf("attrs %+v", ad.Attrs())
	}
	if _, err := ad.Eval("nosuch", nil, &Env{}); err == nil || err.Error() != "evaluating nosuch: not defined" {
		t.Errorf("undefined: %v", err)
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := map[string]string{
		``:                             `line 1: want "[", found end of input`,
		`a = 1`:                        `line 1: want "[", found "a"`,
		`[ a = 1; a = 2 ]`:             "line 1: attribute a already defined on line 1",
		`[ a = 1 b = 2 ]`:              `line 1: want ';' or ']' after attribute a, found "b"`,
		`[ a = 1 ] x`:                  `line 1: text after the closing ']': "x"`,
		`[ a = ]`:                      `line 1: want an expression, found "]"`,
		`[ a = (1 ]`:                   `line 1: want ")", found "]"`,
		`[ a = 1 ? 2 ]`:                `line 1: want ":", found "]"`,
		`[ a = x. ]`:                   `line 1: want a field name after '.', found "]"`,
		`[ a = x[1 ]`:                  `line 1: want ';' or ']' after attribute a, found end of input`,
		`[ a = [b = 1] ]`:              "line 1: nested records are not supported inside expressions",
		`[ a = undefined ]`:            "line 1: UNDEFINED literals are not supported",
		`[ a = 1 $ 2 ]`:                `line 1: unexpected character '$'`,
		`[ a = "x ]`:                   "line 1: unterminated string",
		`[ a = "\q" ]`:                 `line 1: unknown escape \q in string`,
		"[\n\n a = 1 /* open":          "line 3: unterminated comment",
		`[ a = 12abc ]`:                `line 1: bad number "12a"`,
		`[ a = 99999999999999999999 ]`: "line 1: integer 99999999999999999999 out of range",
		`[ a = size(1, 2) ]`:           "line 1: size takes 1 argument, not 2",
		`[ a = linear(1) ]`:            "line 1: linear takes 5 arguments, not 1",
		`[ a = 1 = 2 ]`:                `line 1: want ';' or ']' after attribute a, found "="`,
		`[ 1 = 2 ]`:                    `line 1: want an attribute name, found "1"`,
		"[ a = " + strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300) + " ]": "line 1: expression nested too deeply",
	}
	for src, want := range tests {
		_, err := Parse(src)
		var se *SyntaxError
		if !errors.As(err, &se) || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", src, err, want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	for expr, want := range map[string]string{
		`member(1, 2)`:            "member: second argument is int, not a list",
		`relTime("soon")`:         `relTime("soon"): want seconds`,
		`relTime("1:99")`:         `relTime("1:99")`,
		`absTime("yesterday")`:    `absTime("yesterday"): want an ISO 8601 time`,
		`linear(1, 2, 3, 2, 5)`:   "linear: x1 and x2 are both 2",
		`linear("a", 2, 3, 4, 5)`: "linear: argument 1 is string, not a number",
		`plus_rsvutil("a", 1, 2)`: "plus_rsvutil: no reservation usage is known here",
		`size({1, 2}) % size({})`: "integer divide by zero",
		`{1}[5]`:                  "index out of range",
		`ifThenElse(1, 2, 3)`:     "ifThenElse: condition is int, not a boolean",
		`int("x")`:                `int("x")`,
		`toUpper(1)`:              "argument is int, not a string",
	} {
		_, err := eval(t, "[ X = "+expr+" ]", "X", nil)
		var ee *EvalError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant it to contain %q", expr, err, want)
		}
	}
}

func TestConcurrentEval(t *testing.T) {
	ad, err := Parse(`[ a = n * 2; b = a + 1 ]`)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func(i int) {
			v, err := ad.Eval("b", map[string]any{"n": i}, &Env{})
			if err == nil && v != 2*i+1 {
				err = errors.New("wrong value")
			}
			done <- err
		}(i)
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// FuzzParse: any text parses or is refused with a SyntaxError, never a
// panic; a parsed ad whose references resolve evaluates every attribute
// to a value or an EvalError.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`[ a = 1 + 2 * 3; b = a > 5 ? "x" : "y" ]`,
		`[ U = { "a", "b" }; R = member(N.name, U) && N.loadavg <= 0.3 && !N.isAlive ]`,
		`[ p = relTime("00:30:00"); q = linear(1, 0, 0, p, 100); r = size({}) + q ]`,
		`[ x = /* c */ 1 // d
		]`,
		`[ a = {1,2}[0]; b = strcat("a", a); c = int(real("2.5")) % 2 ]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ad, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a SyntaxError", err)
			}
			return
		}
		vars := map[string]any{"n": map[string]any{"name": "n1", "loadavg": 0.1, "isalive": true}}
		if ad.Check("n") != nil {
			return
		}
		for _, a := range ad.Attrs() {
			if _, err := ad.Eval(a.Name, vars, &Env{Now: time.Unix(0, 0)}); err != nil {
				var ee *EvalError
				if !errors.As(err, &ee) {
					t.Fatalf("%s: error %v is not an EvalError", a.Name, err)
				}
			}
		}
	})
}
