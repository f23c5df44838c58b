// Package reliability is GoPBS's robustness suite. Its tests run the real
// daemons (pbs_server, pbs_mom, pbs_sched) as processes, as root, in
// temporary PBS_HOMEs on ephemeral loopback ports, and attack them:
//
//   - SIGKILL of pbs_server during an 8-client submission storm, then a
//     warm restart: every acknowledged job must be there, none twice;
//   - malformed and truncated requests and random bytes on every port
//     (server TCP/UDP, MOM TCP/UDP, scheduler), after which the daemons
//     must still serve;
//   - impersonation attempts, all of which must be refused;
//   - a client that stops reading and thousands of idle connections,
//     while other clients keep submitting;
//   - a full disk during commits: the server refuses cleanly and loses
//     nothing it acknowledged.
//
// `go test ./reliability` runs the short form (a few minutes on 2 cores);
// GOPBS_SOAK=1 (make soak) runs the long form: 20 kill rounds, 100,000
// malformed requests, 10,000 idle connections. No test asserts timing.
package reliability
