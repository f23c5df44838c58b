// Package state is pbs_server's state: its objects (jobs, queues, nodes,
// the server's own attributes as attribute lists), their definitions
// (attr's tables as the server uses them), their values in canonical text
// and the job list with its index. It knows nothing of sockets, request
// types or the MOM and scheduler links: request handlers and links change
// the state through it, and the store makes it durable.
//
// Nothing here locks: the server holds one lock over all of it (see
// package server).
package state
