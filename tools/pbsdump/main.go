// Command pbsdump is a dissector for TORQUE 2.5.13 protocol captures. It
// reads pcap files, reassembles TCP connections, classifies each flow
// (batch requests to pbs_server and pbs_mom, scheduler command sockets,
// TM/RM on the MOM's resource-monitor port, RPP over UDP carrying IS, RM
// and IM, and raw streams such as qsub -I sessions) and prints one line
// per message.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"gopbs/internal/capture"
)

const usage = `usage: pbsdump [-v] [-json] [-summary] FILE.pcap...

Decodes the TORQUE 2.5.13 traffic in each capture and prints one line per
message, in time order:

  TIME SRC > DST PROTO KIND NAME(NUMBER) [user=USER] [key=value ...]

PROTO is batch (TCP to pbs_server 15001 or pbs_mom 15002), sched (the
scheduler socket 15004: a 4-byte command, then the scheduler's batch
requests), tm or rm (TCP to the MOM's port 15003), rpp (UDP datagrams; a
packet that completes a message carries its decoded IS, RM or IM fields),
raw (data of a stream whose port a decoded message announced: qsub -I,
job output of multi-node tasks) or tcp (a stream of no known protocol).
Bytes that cannot be decoded are reported as KIND "undecoded" with their
offset in the stream or message.
With several files, each file's lines follow a "==> FILE <==" line.
TIME is the UTC time of day; -json gives the full time and the file name.

Flags:
  -v        after each line, print every decoded field as "    path=value"
  -json     print one JSON object per message instead of lines
  -summary  print only the final counters:
            messages=N tcp_messages=N rpp_packets=N sched_commands=N undecoded_bytes=N errors=N

messages counts every decoded message, RPP packet, scheduler command and
raw data chunk; errors counts undecodable regions, CRC failures, lost
packets, messages whose re-encoding differs from the captured bytes, and
unreadable files.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command; it returns the exit status: 0, 1 when some
// bytes could not be decoded or a file could not be read, 2 for a usage
// error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pbsdump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	verbose := fs.Bool("v", false, "print every field")
	asJSON := fs.Bool("json", false, "print JSON lines")
	summary := fs.Bool("summary", false, "print only the counters")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	var st Stats
	for _, path := range fs.Args() {
		c, err := capture.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "pbsdump: %v\n", err)
			st.Errors++
			continue
		}
		if !*summary && !*asJSON && fs.NArg() > 1 {
			fmt.Fprintf(out, "==> %s <==\n", path)
		}
		for _, m := range Dump(c) {
			st.add(m)
			if *summary {
				continue
			}
			if err := write(out, m, *verbose, *asJSON); err != nil {
				fmt.Fprintf(stderr, "pbsdump: %v\n", err)
				return 1
			}
		}
	}
	if *summary {
		fmt.Fprintln(out, st)
	}
	if st.Errors > 0 || st.UndecodedBytes > 0 {
		return 1
	}
	return 0
}

func write(w io.Writer, m *Message, verbose, asJSON bool) error {
	switch {
	case asJSON:
		b, err := JSON(m)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case verbose:
		return Verbose(w, m)
	}
	_, err := fmt.Fprintln(w, Line(m))
	return err
}
