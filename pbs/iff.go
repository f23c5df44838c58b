package pbs

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"gopbs/batchreq"
)

// SbinDir is the installed system-binary directory where pbs_iff is
// looked for when PBSBINDIR is not set. The build may override it with
// -ldflags "-X gopbs/pbs.SbinDir=...".
var SbinDir = "/usr/local/sbin"

// IffName is the file name of the authentication helper.
const IffName = "pbs_iff"

// FindIff returns the path of pbs_iff, searched as TORQUE does —
// $PBSBINDIR, then the installed sbin directory — and then next to the
// running executable (or in its ../sbin), so that a bin/ built in place
// works once its pbs_iff is setuid root, as does an installation under any
// prefix; last, like TORQUE, the first $PATH element.
func FindIff() (string, error) {
	exe, _ := os.Executable()
	return findIff(os.Getenv("PBSBINDIR"), SbinDir, exe, os.Getenv("PATH"))
}

// findIff is FindIff with its inputs: the PBSBINDIR value, the installed
// sbin directory, the running executable ("" if unknown) and PATH.
func findIff(binDir, sbinDir, exe, path string) (string, error) {
	var candidates []string
	if binDir != "" {
		candidates = append(candidates, filepath.Join(binDir, IffName))
	}
	if sbinDir != "" {
		candidates = append(candidates, filepath.Join(sbinDir, IffName))
	}
	if exe != "" {
		dir := filepath.Dir(exe)
		candidates = append(candidates, filepath.Join(dir, IffName),
			filepath.Join(filepath.Dir(dir), "sbin", IffName))
	}
	if first, _, _ := strings.Cut(path, ":"); first != "" {
		candidates = append(candidates, filepath.Join(first, IffName))
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", &Error{Code: batchreq.PBSE_IFF_NOT_FOUND}
}

// socketFile returns a duplicate of the connection's descriptor, for
// pbs_iff to inherit. Unlike (*net.TCPConn).File it leaves the connection
// in non-blocking mode, so that its read deadlines ($PBSAPITIMEOUT) keep
// working.
func socketFile(nc *net.TCPConn) (*os.File, error) {
	rc, err := nc.SyscallConn()
	if err != nil {
		return nil, err
	}
	dup := -1
	var derr error
	if err := rc.Control(func(fd uintptr) {
		dup, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	return os.NewFile(uintptr(dup), "pbs-socket"), nil
}

// authenticate runs pbs_iff for the connected socket nc, with the server
// name and port as used for the connection. pbs_iff inherits the socket
// as descriptor 3 and answers with the 4-byte integer 0 on its stdout.
// Its stderr is the caller's, as with TORQUE.
func authenticate(nc *net.TCPConn, host string, port int) error {
	path, err := FindIff()
	if err != nil {
		return err
	}
	f, err := socketFile(nc)
	if err != nil {
		return &Error{Code: batchreq.PBSE_PERM, Text: ""}
	}
	defer f.Close()
	cmd := exec.Command(path, host, strconv.Itoa(port), "3")
	cmd.ExtraFiles = []*os.File{f}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("pbs_iff: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return &Error{Code: batchreq.PBSE_PERM}
	}
	var cred [4]byte
	_, rerr := io.ReadFull(out, cred[:])
	_, _ = io.Copy(io.Discard, out)
	_ = cmd.Wait() // the exit status is ignored, as in TORQUE
	if rerr != nil || cred != [4]byte{} {
		return &Error{Code: batchreq.PBSE_PERM}
	}
	return nil
}
