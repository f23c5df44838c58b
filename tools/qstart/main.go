// Command qstart lets a queue's jobs be scheduled: Manager SET queue started=TRUE
// (spec 05 §4).
package main

import (
	"os"

	"gopbs/pbs/cli"
)

func main() {
	cli.Exit(cli.SetQueueAttr("qstart", "started", "TRUE", os.Args))
}
