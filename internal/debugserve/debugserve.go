// Package debugserve runs the daemons' hidden debugging listener: when the
// environment variable Env names a loopback address ("127.0.0.1:6060"),
// the daemon serves its runtime profiles (package net/http/pprof) there,
// with any handlers of its own. It is an aid for the performance work
// (docs/performance.md, tools/schedbench), not in any usage text; other
// addresses are refused.
package debugserve

import (
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// Env names the environment variable holding the listener's address.
const Env = "GOPBS_PPROF"

// LoopbackAddr reports whether addr is host:port with a loopback IP
// address as host (names are not resolved).
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

// Start serves the runtime profiles under /debug/pprof/, and extra
// (path → handler, may be nil), on the address Env names. It returns the
// listener, which stops the serving when closed, or nil when Env is
// unset, not a loopback address or cannot be listened on.
func Start(extra map[string]http.Handler) net.Listener {
	addr := os.Getenv(Env)
	if addr == "" || !LoopbackAddr(addr) {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	for path, h := range extra {
		mux.Handle(path, h)
	}
	go http.Serve(ln, mux)
	return ln
}
