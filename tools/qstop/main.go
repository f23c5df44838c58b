// Command qstop stops the scheduling of a queue's jobs: Manager SET queue started=FALSE
// (spec 05 §4).
package main

import (
	"os"

	"gopbs/pbs/cli"
)

func main() {
	cli.Exit(cli.SetQueueAttr("qstop", "started", "FALSE", os.Args))
}
