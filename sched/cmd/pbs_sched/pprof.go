package main

import (
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// pprofEnv names the environment variable that, when set to a loopback
// address ("127.0.0.1:6061"), makes pbs_sched serve its runtime profiles
// (package net/http/pprof) there, as pbs_server does: a hidden aid for
// the performance work (tools/schedbench). Other addresses are ignored.
const pprofEnv = "GOPBS_PPROF"

// loopbackAddr reports whether addr is host:port with a loopback IP
// address as host.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

// startPprof serves the runtime profiles if pprofEnv asks for it. It
// returns the listener (nil if none); closing it stops the serving.
func startPprof() net.Listener {
	addr := os.Getenv(pprofEnv)
	if addr == "" || !loopbackAddr(addr) {
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
