// Command qenable lets a queue accept jobs: Manager SET queue enabled=TRUE
// (spec 05 §4).
package main

import (
	"os"

	"gopbs/pbs/cli"
)

func main() {
	cli.Exit(cli.SetQueueAttr("qenable", "enabled", "TRUE", os.Args))
}
