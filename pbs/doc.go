// Package pbs is the GoPBS client library: the TORQUE 2.5.13 "IFL"
// (interface library) that client commands, the scheduler and tools use to
// talk to a pbs_server.
//
// A Conn is one authenticated TCP connection to a server. Connect picks
// the server the way TORQUE does (an explicit "host[:port]", else
// PBS_DEFAULT, PBS_SERVER, or the server_name file in the PBS home),
// connects from an ordinary port and has the setuid-root pbs_iff helper
// vouch for the connection with an AuthenticateUser request (spec 03).
// Each method sends one batch request, in lock-step, and decodes the reply
// (spec 02); the messages, the protocol constants (PBSE_*, MGR_*, batch
// operations, ...) and the PBSE texts are those of package batchreq. A
// server refusal is returned as an *Error carrying the PBSE code and the
// server's text, which the commands print verbatim.
//
//	c, err := pbs.Connect("")
//	if err != nil { ... }
//	defer c.Close() // sends Disconnect
//	jobs, err := c.StatusJob("", nil, "summarize_arrays")
//
// Job ids typed by users are parsed with ParseJobID and normalised as
// TORQUE's clients send them with ResolveJobID (the server part becomes
// the full, lower-cased host name of the parent or default server), and
// requests that fail with PBSE_UNKJOBID can be retried at the job's real
// location with WithLocate.
//
// Configuration, as TORQUE's library reads it: the server list from
// $PBS_DEFAULT, $PBS_SERVER or <home>/server_name; $PBSBINDIR for pbs_iff;
// $PBSAPITIMEOUT for the reply timeout; TRQ_IFNAME in <home>/torque.cfg
// (ReadTorqueConfig) for the interface to connect from. GoPBS additions: $PBS_HOME
// overrides the compiled-in home, $PBS_BATCH_SERVICE_PORT the default
// batch port, and a $HOSTALIASES file maps server names (as the C
// resolver does). The compiled-in values are link-time variables:
//
//	go build -ldflags "-X gopbs/pbs.DefaultHome=/var/spool/torque \
//	    -X gopbs/pbs.DefaultPort=15001 -X gopbs/pbs.SbinDir=/usr/local/sbin"
package pbs
