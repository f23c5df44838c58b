// Command qhold places holds on batch jobs (HoldJob; spec 05 §4).
package main

import (
	"os"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	cli.Exit(cli.Holds("qhold", os.Args, (*pbs.Conn).HoldJob))
}
