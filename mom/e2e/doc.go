// Package e2e holds end-to-end tests of pbs_mom's execution features that a
// site relies on once jobs run for real (issue 20): limits that are
// enforced, job cgroups, checkpoint and restart. They run pbs_server and
// pbs_mom as processes in temporary homes on free loopback ports, as root,
// with jobs run as an unprivileged test user; the package has no code
// besides its tests.
package e2e
