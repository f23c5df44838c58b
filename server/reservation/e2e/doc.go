// Package e2e holds the end-to-end tests of advance reservations (issue
// 17): pbs_server, three pbs_mom processes and pbs_sched run as
// processes in temporary homes on free loopback ports (the MOMs on
// 127.0.0.2-4 under node names that a private /etc/hosts gives them),
// driven by the plus_* commands, qsub and qstat as a user would, with
// restarts of the server in the middle. The package has no code besides
// its tests.
package e2e
