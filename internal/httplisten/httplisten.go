// Package httplisten runs the daemons' opt-in HTTP listener (pbs_server's
// metrics and status page, pbs_mom's metrics): it reads the address a
// flag, an attribute or a configuration line gives, binding to loopback
// unless a host is named, and serves a handler there with timeouts that a
// slow or silent client cannot exhaust.
package httplisten

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultHost is the host a listener binds when its address names only a
// port.
const DefaultHost = "127.0.0.1"

// ParseAddr returns the listening address of v: "PORT" or ":PORT" mean
// DefaultHost:PORT; "HOST:PORT" and "[IPv6]:PORT" are taken as given. The
// port must be a number from 0 (any free port) to 65535.
func ParseAddr(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", errors.New("empty address")
	}
	host, port := "", v
	if strings.Contains(v, ":") {
		var err error
		host, port, err = net.SplitHostPort(v)
		if err != nil {
			return "", fmt.Errorf("bad address %q: %w", v, err)
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("bad address %q: port must be a number from 0 to 65535", v)
	}
	if host == "" {
		host = DefaultHost
	}
	return net.JoinHostPort(host, strconv.Itoa(n)), nil
}

// Listener is a running HTTP listener.
type Listener struct {
	ln  net.Listener
	srv *http.Server
	err chan error
}

// Start listens on addr (as ParseAddr reads it) and serves h there until
// Close.
func Start(addr string, h http.Handler) (*Listener, error) {
	a, err := ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, fmt.Errorf("http listener: %w", err)
	}
	l := &Listener{
		ln: ln,
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       60 * time.Second,
			MaxHeaderBytes:    16 << 10,
		},
		err: make(chan error, 1),
	}
	go func() { l.err <- l.srv.Serve(ln) }()
	return l, nil
}

// Addr returns the address listened on.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// URL returns the listener's base URL ("http://127.0.0.1:15080/").
func (l *Listener) URL() string { return "http://" + l.ln.Addr().String() + "/" }

// Close stops listening and closes the connections being served, waiting
// at most a second for requests under way.
func (l *Listener) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := l.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = l.srv.Close()
	}
	if serveErr := <-l.err; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	return err
}
