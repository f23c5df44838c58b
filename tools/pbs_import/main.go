// Command pbs_import moves a TORQUE 2.5 server's state into a GoPBS home:
// it reads the server_priv a stopped TORQUE pbs_server left (binary
// serverdb, queues/*, jobs/*.JB, *.SC, *.TA, arrays/*.AR, nodes,
// node_status, node_note, acl_svr/*, the queue ACL files) and writes the
// same server attributes, queues, nodes and jobs into a GoPBS database,
// server_priv/serverdb.bolt, through the server's own record encoding.
//
// Usage:
//
//	pbs_import [-d torque_home] [-o gopbs_home] [-running refuse|requeue|keep]
//
// -d is the TORQUE PBS_HOME (default $PBS_HOME or /var/spool/torque); -o
// the GoPBS home to write (default: the same directory, where the TORQUE
// files then stay beside the database and accounting/, server_logs/ and
// spool/ stay where they are; for another directory server_name,
// server_priv/nodes and a copy of the accounting files are written too).
//
// Jobs running when TORQUE stopped refuse the import by default, named
// in the message (drain the queues first). -running=requeue puts the
// rerunnable ones back in their queues; -running=keep leaves them running
// under GoPBS, whose server their MOMs report to as they did to TORQUE.
//
// The import writes nothing unless every file decodes (a damaged file is
// named in the error), and refuses a home that already holds a GoPBS
// database, so it cannot be run twice.
//
// Exit status: 0 on success, 1 when the import is refused or fails, 2 for
// a usage error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"gopbs/migrate"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pbs_import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := os.Getenv("PBS_HOME")
	if def == "" {
		def = "/var/spool/torque"
	}
	from := fs.String("d", def, "TORQUE PBS_HOME to read")
	to := fs.String("o", "", "GoPBS home to write (default: the TORQUE home)")
	running := fs.String("running", "refuse", "running jobs: refuse, requeue (rerunnable ones) or keep")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pbs_import: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	policy, err := migrate.ParseRunning(*running)
	if err != nil {
		fmt.Fprintf(stderr, "pbs_import: -running: %v\n", err)
		return 2
	}
	if *to == "" {
		*to = *from
	}
	res, err := migrate.Import(*from, *to, migrate.Options{Running: policy})
	if err != nil {
		fmt.Fprintf(stderr, "pbs_import: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "pbs_import: %s: %d queues, %d nodes, %d jobs imported from %s\n", res.Database, res.Queues, res.Nodes, res.Jobs, *from)
	if len(res.Requeued) > 0 {
		fmt.Fprintf(stdout, "pbs_import: requeued running jobs: %s\n", strings.Join(res.Requeued, ", "))
	}
	if len(res.Kept) > 0 {
		fmt.Fprintf(stdout, "pbs_import: jobs left running: %s\n", strings.Join(res.Kept, ", "))
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(stdout, "pbs_import: jobs still being received, not imported: %s\n", strings.Join(res.Skipped, ", "))
	}
	for _, d := range res.Dropped {
		fmt.Fprintf(stdout, "pbs_import: unknown attribute left out: %s\n", d)
	}
	return 0
}
