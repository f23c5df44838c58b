// Package netsys holds the system calls of pbs_server's event loop on
// Linux (server/netloop_linux.go): accept4, read, send, close, epoll and
// eventfd on non-blocking sockets. All but the blocking wait are made as
// raw system calls: none of them blocks, so the runtime need not be told
// that the thread enters the kernel, and the loop's goroutine keeps its
// P: no other thread is woken to take it over while a loopback write runs
// the peer's TCP input, and the runtime's monitor thread finds nothing to
// retake. Elsewhere the package is empty.
package netsys
