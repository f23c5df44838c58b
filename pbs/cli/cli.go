// Package cli holds what the GoPBS client commands share: connecting with
// TORQUE's connection-error messages, printing job errors the way every
// job command does, and exit statuses.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"gopbs/batchreq"
	"gopbs/pbs"
)

// Connect connects to server ("" = default) as TORQUE's cnt2server does:
// on failure it prints the explanatory line of spec 05 §1.2 to stderr,
// tries the fall-back server after a refused default connection, and
// returns the error.
func Connect(server string) (*pbs.Conn, error) {
	c, err := pbs.Connect(server)
	if err == nil {
		return c, nil
	}
	var en syscall.Errno
	switch {
	case errors.As(err, &en) && en == syscall.ECONNREFUSED:
		if server == "" {
			if fb := pbs.FallbackServer(); fb != "" {
				if c, ferr := pbs.Connect(fb); ferr == nil {
					return c, nil
				}
			}
			fmt.Fprintf(os.Stderr, "Cannot connect to default server host '%s' - check pbs_server daemon.\n", pbs.DefaultServer())
		} else {
			fmt.Fprintf(os.Stderr, "Cannot connect to specified server host '%s'.\n", server)
		}
	case errors.As(err, &en):
		fmt.Fprintf(os.Stderr, "%s\n", batchreq.Strerror(int(en)))
	default:
		switch pbs.Errno(err) {
		case batchreq.PBSE_BADHOST:
			if server == "" {
				fmt.Fprintf(os.Stderr, "Cannot resolve default server host '%s' - check server_name file.\n", pbs.DefaultServer())
			} else {
				fmt.Fprintf(os.Stderr, "Cannot resolve specified server host '%s'.\n", server)
			}
		case batchreq.PBSE_NOCONNECTS:
			fmt.Fprintln(os.Stderr, "Too many open connections.")
		case batchreq.PBSE_NOSERVER:
			fmt.Fprintln(os.Stderr, "No default server name - check server_name file.")
		case batchreq.PBSE_SYSTEM:
			fmt.Fprintln(os.Stderr, "System call failure.")
		case batchreq.PBSE_PERM:
			fmt.Fprintln(os.Stderr, "No Permission.")
		case batchreq.PBSE_IFF_NOT_FOUND:
			fmt.Fprintln(os.Stderr, "pbs_iff command not found.")
		default:
			fmt.Fprintln(os.Stderr, "Communication failure.")
		}
	}
	return nil, err
}

// ConnectRetry is Connect for commands that retry a failed connection
// (qsub -b, $PBS_CLIENTRETRY, torque.cfg CLIENTRETRY): for up to retry
// seconds it tries again every 5 seconds, after printing "Retrying for
// <n> seconds" once; the last attempt reports its failure as Connect
// does. With retry <= 0 it is Connect.
func ConnectRetry(server string, retry int) (*pbs.Conn, error) {
	if retry <= 0 {
		return Connect(server)
	}
	deadline := time.Now().Add(time.Duration(retry) * time.Second)
	for first := true; ; first = false {
		c, err := pbs.Connect(server)
		if err == nil {
			return c, nil
		}
		if first {
			fmt.Fprintf(os.Stderr, "Retrying for %d seconds\n", retry)
		}
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		time.Sleep(min(left, retryInterval))
	}
	return Connect(server)
}

// retryInterval is the pause between two connection attempts of
// ConnectRetry.
const retryInterval = 5 * time.Second

// ErrText returns the text for err as commands print it after "(errno=N)":
// the server's text, else the PBSE or errno message.
func ErrText(err error) string {
	if t := pbs.ServerText(err); t != "" {
		return t
	}
	return pbs.ErrorText(pbs.Errno(err))
}

// ConnectFailed prints "<prog>: cannot connect to server <s> (errno=<n>) <text>"
// and returns the error number.
func ConnectFailed(w io.Writer, prog, server string, err error) int {
	n := pbs.Errno(err)
	fmt.Fprintf(w, "%s: cannot connect to server %s (errno=%d) %s\n", prog, server, n, ErrText(err))
	return n
}

// JobError prints a failed job request as every job command does:
// "<prog>: <server text> <jobid>", or without a text
// "<prog>: Server returned error <n> for job <jobid>". It returns the
// error number.
func JobError(w io.Writer, prog, jobid string, err error) int {
	n := pbs.Errno(err)
	if t := pbs.ServerText(err); t != "" {
		fmt.Fprintf(w, "%s: %s %s\n", prog, t, jobid)
	} else {
		fmt.Fprintf(w, "%s: Server returned error %d for job %s\n", prog, n, jobid)
	}
	return n
}

// RequestFailed prints a failed request as the status, select and submit
// commands do: "<prog>: <server text><textSuffix>" when the reply carried
// a text, else "<prog>: Error (<n> - <message>) <action>". It returns the
// error number.
func RequestFailed(w io.Writer, prog string, err error, textSuffix, action string) int {
	n := pbs.Errno(err)
	if t := pbs.ServerText(err); t != "" {
		fmt.Fprintf(w, "%s: %s%s\n", prog, t, textSuffix)
	} else {
		fmt.Fprintf(w, "%s: Error (%d - %s) %s\n", prog, n, pbs.ErrorText(n), action)
	}
	return n
}

// VersionRequested handles the --version and --about arguments of qsub,
// qstat and pbsnodes (spec 05 §1.5): if args (without the program name)
// hold one of them it prints "version: 2.5.13" or the build information to
// w and reports true; the command then exits 0.
func VersionRequested(args []string, w io.Writer) bool {
	for _, a := range args {
		switch a {
		case "--version":
			fmt.Fprintln(w, "version: "+Version)
			return true
		case "--about":
			fmt.Fprintf(w, "package: GoPBS, compatible with TORQUE %s\n", Version)
			return true
		}
	}
	return false
}

// Version is the TORQUE version the commands report and speak.
const Version = "2.5.13"

// Exit exits with status as the OS reports it (the low 8 bits).
func Exit(status int) {
	os.Exit(status & 0xff)
}

// ServerName returns the name to print for a server operand: the given
// name or, for "", the default server.
func ServerName(s string) string {
	if s == "" {
		return pbs.DefaultServer()
	}
	return s
}

// SplitDest splits a destination "queue[@server]" or "@server".
func SplitDest(d string) (queue, server string) {
	queue, server, _ = strings.Cut(d, "@")
	return queue, server
}

// RunJobOps runs op on every job id operand, with TORQUE's
// locate-and-retry, printing errors like the job commands and returning
// the exit status (the last error number).
func RunJobOps(prog string, ids []string, op func(c *pbs.Conn, id string) error) int {
	return runJobOps(prog, ids, true, op)
}

// RunJobOpsNoConnectText is RunJobOps for commands whose connection error
// line ends after "(errno=N)" (qchkpt).
func RunJobOpsNoConnectText(prog string, ids []string, op func(c *pbs.Conn, id string) error) int {
	return runJobOps(prog, ids, false, op)
}

func runJobOps(prog string, ids []string, connectText bool, op func(c *pbs.Conn, id string) error) int {
	status := 0
	for _, arg := range ids {
		j, err := pbs.ResolveJobID(arg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: illegally formed job identifier: %s\n", prog, arg)
			status = 1
			continue
		}
		err = pbs.WithLocate(j, Connect, op)
		if err == nil {
			continue
		}
		var ce *pbs.ConnectError
		if errors.As(err, &ce) {
			if connectText {
				fmt.Fprintf(os.Stderr, "%s: cannot connect to server %s (errno=%d) %s\n",
					prog, ServerName(ce.Server), pbs.Errno(ce.Err), ErrText(ce.Err))
			} else {
				fmt.Fprintf(os.Stderr, "%s: cannot connect to server %s (errno=%d)\n",
					prog, ServerName(ce.Server), pbs.Errno(ce.Err))
			}
			status = pbs.Errno(ce.Err)
			continue
		}
		status = JobError(os.Stderr, prog, j.Qualified(), err)
	}
	return status
}
