package server

import "strings"

// Checkpoint values (qsub -c, spec 05; seed 001): the comma-separated
// items n/none, u, s/shutdown, c, c=<minutes>, periodic,
// interval=<minutes>, enabled, depth=<n>, dir=<path>.

// neverCheckpoint reports whether a Checkpoint value is n (or none): the
// only jobs the server's shutdown does not checkpoint (seed 001, Server
// Shutdown: unspecified, u, included).
func neverCheckpoint(v string) bool {
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t == "n" || t == "none" {
			return true
		}
	}
	return false
}
