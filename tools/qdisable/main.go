// Command qdisable stops a queue from accepting jobs: Manager SET queue enabled=FALSE
// (spec 05 §4).
package main

import (
	"os"

	"gopbs/pbs/cli"
)

func main() {
	cli.Exit(cli.SetQueueAttr("qdisable", "enabled", "FALSE", os.Args))
}
