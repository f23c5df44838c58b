package cli

import (
	"fmt"
	"os"

	"gopbs/batchreq"
	"gopbs/pbs"
)

// SetQueueAttr is qenable, qdisable, qstart and qstop: for each
// destination operand "queue[@server]" it sets one queue attribute with a
// Manager request. It returns the exit status: 2 after a server or
// connection error, 1 after a malformed destination or usage error.
func SetQueueAttr(prog, attr, value string, args []string) int {
	_, dests, bad := Getopt(args[1:], "", args[0], os.Stderr)
	if bad || len(dests) == 0 {
		fmt.Fprintf(os.Stderr, "usage: %s destination ...\n", prog)
		return 1
	}
	status := 0
	for _, d := range dests {
		queue, server := SplitDest(d)
		if queue == "" {
			fmt.Fprintf(os.Stderr, "%s: illegally formed destination: %s\n", prog, d)
			status = 1
			continue
		}
		c, err := Connect(server)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: could not connect to server %s (%d) %s\n",
				prog, ServerName(server), pbs.Errno(err), ErrText(err))
			status = 2
			continue
		}
		err = c.Manager(batchreq.MGR_CMD_SET, batchreq.MGR_OBJ_QUEUE, queue,
			[]pbs.Attr{{Name: attr, Value: value}}, "")
		c.Close()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %s %s\n", prog, ErrText(err), d)
			status = 2
		}
	}
	return status
}
