package httplisten

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestParseAddr(t *testing.T) {
	for in, want := range map[string]string{
		"15080":           "127.0.0.1:15080",
		":15080":          "127.0.0.1:15080",
		" 0 ":             "127.0.0.1:0",
		"127.0.0.2:80":    "127.0.0.2:80",
		"[::1]:9100":      "[::1]:9100",
		"0.0.0.0:9100":    "0.0.0.0:9100",
		"localhost:15080": "localhost:15080",
	} {
		got, err := ParseAddr(in)
		if err != nil || got != want {
			t.Errorf("ParseAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "host:", "host:port", "70000", "-1", "1:2:3", "[::1"} {
		if got, err := ParseAddr(in); err == nil {
			t.Errorf("ParseAddr(%q) = %q, want an error", in, got)
		}
	}
}

func TestStartClose(t *testing.T) {
	l, err := Start("0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.URL.Path)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %s not on loopback", l.URL())
	}
	resp, err := http.Get(l.URL() + "x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello /x" {
		t.Errorf("body %q", b)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
	if _, err := http.Get(l.URL()); err == nil {
		t.Error("still serving after Close")
	}
	if _, err := Start("bogus", http.NotFoundHandler()); err == nil {
		t.Error("Start accepted a bad address")
	}
}
