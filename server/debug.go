package server

import (
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// pprofEnv names the environment variable that, when set to a loopback
// address ("127.0.0.1:6060"), makes pbs_server serve the runtime
// profiles (package net/http/pprof) there: a hidden debugging aid for the
// performance work (docs/performance.md). Other addresses are refused.
const pprofEnv = "GOPBS_PPROF"

// startPprof serves the runtime profiles if pprofEnv asks for it. It
// returns the listener (nil if none) so that Shutdown can close it.
func startPprof() net.Listener {
	addr := os.Getenv(pprofEnv)
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
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
	go http.Serve(ln, mux)
	return ln
}
