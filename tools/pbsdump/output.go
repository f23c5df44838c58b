package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// value renders a field value: bare when it is a plain token, quoted
// otherwise (empty, blanks, quotes, control or non-ASCII bytes).
func value(s string) string {
	if s == "" {
		return `""`
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return strconv.Quote(s)
		}
	}
	return s
}

// Line formats a message as one line:
//
//	TIME SRC > DST PROTO KIND NAME(NUMBER) [user=USER] [key=value ...] [error=...]
//
// TIME is the UTC time of day with microseconds. An undecoded region
// reads "... PROTO undecoded offset=N bytes=N error=...".
func Line(m *Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s > %s %s %s", m.Time.UTC().Format("15:04:05.000000"), m.Src, m.Dst, m.Proto, m.Kind)
	if m.Name != "" {
		b.WriteByte(' ')
		b.WriteString(m.Name)
		if m.Number >= 0 || m.Proto == "sched" {
			fmt.Fprintf(&b, "(%d)", m.Number)
		}
	}
	if m.User != "" {
		fmt.Fprintf(&b, " user=%s", value(m.User))
	}
	for _, f := range m.Fields {
		fmt.Fprintf(&b, " %s=%s", f.Key, value(f.Value))
	}
	if m.Kind == "undecoded" || m.Undecoded > 0 {
		fmt.Fprintf(&b, " offset=%d bytes=%d", m.Offset, m.Undecoded)
	}
	if m.Err != "" {
		fmt.Fprintf(&b, " error=%s", value(m.Err))
	}
	return b.String()
}

// Verbose writes the line of a message followed by every decoded field,
// one "    path=value" line each (paths like Body.Attrs[3].Value).
func Verbose(w io.Writer, m *Message) error {
	if _, err := fmt.Fprintln(w, Line(m)); err != nil {
		return err
	}
	if m.Detail == nil {
		return nil
	}
	var lines []string
	flatten(&lines, "", plain(reflect.ValueOf(m.Detail)))
	for _, l := range lines {
		if _, err := fmt.Fprintf(w, "    %s\n", l); err != nil {
			return err
		}
	}
	return nil
}

// flatten appends one "path=value" line per leaf of v.
func flatten(lines *[]string, path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(lines, p, x[k])
		}
	case []any:
		if len(x) == 0 {
			*lines = append(*lines, path+"=[]")
		}
		for i, e := range x {
			flatten(lines, fmt.Sprintf("%s[%d]", path, i), e)
		}
	case string:
		*lines = append(*lines, path+"="+value(x))
	default:
		*lines = append(*lines, fmt.Sprintf("%s=%v", path, x))
	}
}

// plain converts a decoded value into maps, slices, strings, numbers and
// booleans, turning byte slices into strings, for printing and JSON.
func plain(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return plain(v.Elem())
	case reflect.Struct:
		out := make(map[string]any)
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
				if inner, ok := plain(v.Field(i)).(map[string]any); ok {
					for k, x := range inner {
						out[k] = x
					}
				}
				continue
			}
			out[sf.Name] = plain(v.Field(i))
		}
		return out
	case reflect.Map:
		out := make(map[string]any)
		iter := v.MapRange()
		for iter.Next() {
			out[fmt.Sprint(iter.Key().Interface())] = plain(iter.Value())
		}
		return out
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return string(v.Bytes())
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = plain(v.Index(i))
		}
		return out
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint()
	}
	if v.IsValid() {
		return fmt.Sprint(v.Interface())
	}
	return nil
}

// jsonMessage is the -json form of a message.
type jsonMessage struct {
	File      string            `json:"file"`
	Time      string            `json:"time"`
	Src       string            `json:"src"`
	Dst       string            `json:"dst"`
	Proto     string            `json:"proto"`
	Kind      string            `json:"kind"`
	Name      string            `json:"name,omitempty"`
	Number    int               `json:"number"`
	User      string            `json:"user,omitempty"`
	Fields    map[string]string `json:"fields,omitempty"`
	Offset    int64             `json:"offset"`
	Size      int               `json:"size"`
	Undecoded int               `json:"undecoded,omitempty"`
	Error     string            `json:"error,omitempty"`
	Detail    any               `json:"detail,omitempty"`
}

// JSON returns the message as one JSON object, with every decoded field
// under "detail".
func JSON(m *Message) ([]byte, error) {
	j := jsonMessage{
		File: m.File, Time: m.Time.UTC().Format(time.RFC3339Nano), Src: m.Src.String(), Dst: m.Dst.String(),
		Proto: m.Proto, Kind: m.Kind, Name: m.Name, Number: m.Number, User: m.User,
		Offset: m.Offset, Size: m.Size, Undecoded: m.Undecoded, Error: m.Err,
	}
	if len(m.Fields) > 0 {
		j.Fields = make(map[string]string, len(m.Fields))
		for _, f := range m.Fields {
			j.Fields[f.Key] = f.Value
		}
	}
	if m.Detail != nil {
		j.Detail = plain(reflect.ValueOf(m.Detail))
	}
	return json.Marshal(j)
}
