// Package clitest holds the table tests of the GoPBS client commands: it
// builds the commands, runs each test case's command line against a fake
// pbs_server that answers with the case's scripted replies, and compares
// the requests the command sent (as DIS text), its standard output,
// standard error and exit status with the case. The package has no
// non-test code beyond this comment.
package clitest
