// Command qrls releases holds from batch jobs (ReleaseJob; spec 05 §4).
package main

import (
	"os"

	"gopbs/pbs"
	"gopbs/pbs/cli"
)

func main() {
	cli.Exit(cli.Holds("qrls", os.Args, (*pbs.Conn).ReleaseJob))
}
