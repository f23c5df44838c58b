package jobexec

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// starterFlag marks an invocation of the current executable as the job
// starter (os.Args[1]); os.Args[2] is the JSON starterSpec.
const starterFlag = "-gopbs-job-starter"

// Rlimit is one resource limit applied before the shell is exec'ed.
type Rlimit struct {
	Resource int    `json:"r"` // unix.RLIMIT_*
	Cur      uint64 `json:"c"`
	Max      uint64 `json:"m"`
}

// starterSpec is what the starter does between fork and the exec of the
// shell: nice and chroot (as root), setgroups/setgid/setuid, chdir, umask,
// resource limits, report success, exec. (TORQUE sets the limits before
// setuid; here they come last so that the starter itself is not constrained
// by a job's memory limits. Lowering limits needs no privilege.)
type starterSpec struct {
	UID       uint32   `json:"uid"`
	GID       uint32   `json:"gid"`
	Groups    []uint32 `json:"groups"`
	Limits    []Rlimit `json:"limits"`
	Nice      int      `json:"nice"`
	OOMAdjust int      `json:"oom"`
	Chroot    string   `json:"chroot"`
	Dir       string   `json:"dir"`
	Umask     int      `json:"umask"` // -1 = leave
	Path      string   `json:"path"`  // program to exec
	Argv      []string `json:"argv"`  // its argv, argv[0] included
}

// Starter failure codes written to the report pipe ("E<status> <text>").
// Success is "OK".

// RunStarterIfRequested must be called at the very start of main (and of
// TestMain in tests that start jobs). When the process was started by the
// Engine as a job starter it performs the starter steps and never returns;
// otherwise it returns immediately.
func RunStarterIfRequested() {
	if len(os.Args) < 3 || os.Args[1] != starterFlag {
		return
	}
	report := os.NewFile(3, "report")
	var spec starterSpec
	if err := json.Unmarshal([]byte(os.Args[2]), &spec); err != nil {
		starterFail(report, JOB_EXEC_FAIL1, "bad starter spec: "+err.Error())
	}
	runStarter(&spec, report)
}

func starterFail(report io.Writer, status int, msg string) {
	if report != nil {
		fmt.Fprintf(report, "E%d %s\n", status, strings.ReplaceAll(msg, "\n", " "))
	}
	os.Exit(1)
}

func runStarter(spec *starterSpec, report *os.File) {
	// Hard limits above the current ones can only be raised while root;
	// the final values are set just before the exec.
	for _, l := range spec.Limits {
		var cur unix.Rlimit
		if unix.Getrlimit(l.Resource, &cur) == nil && cur.Max != unix.RLIM_INFINITY && (l.Max > cur.Max || l.Max == unix.RLIM_INFINITY) {
			_ = unix.Setrlimit(l.Resource, &unix.Rlimit{Cur: cur.Cur, Max: l.Max})
		}
	}
	if spec.Nice != 0 {
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, spec.Nice); err != nil {
			starterFail(report, JOB_EXEC_RETRY, "nice: "+err.Error())
		}
	}
	if spec.OOMAdjust != 0 {
		_ = os.WriteFile("/proc/self/oom_score_adj", []byte(strconv.Itoa(spec.OOMAdjust)), 0)
	}
	if spec.Chroot != "" {
		if err := syscall.Chroot(spec.Chroot); err != nil {
			starterFail(report, JOB_EXEC_FAIL2, "chroot: "+err.Error())
		}
	}
	groups := make([]int, len(spec.Groups))
	for i, g := range spec.Groups {
		groups[i] = int(g)
	}
	if os.Getuid() == 0 {
		if err := syscall.Setgroups(groups); err != nil {
			starterFail(report, JOB_EXEC_FAIL1, "setgroups: "+err.Error())
		}
	}
	if uint32(os.Getgid()) != spec.GID || uint32(os.Getegid()) != spec.GID {
		if err := syscall.Setregid(int(spec.GID), int(spec.GID)); err != nil {
			starterFail(report, JOB_EXEC_FAIL1, "setgid: "+err.Error())
		}
	}
	if uint32(os.Getuid()) != spec.UID || uint32(os.Geteuid()) != spec.UID {
		if err := syscall.Setreuid(int(spec.UID), int(spec.UID)); err != nil {
			starterFail(report, JOB_EXEC_FAIL1, "setuid: "+err.Error())
		}
	}
	if spec.Dir != "" {
		if err := os.Chdir(spec.Dir); err != nil {
			fmt.Fprintf(os.Stderr, "PBS: chdir to '%s' failed: %v\n", spec.Dir, underlying(err))
			starterFail(report, JOB_EXEC_FAIL2, "chdir to '"+spec.Dir+"' failed")
		}
	}
	if spec.Umask >= 0 {
		syscall.Umask(spec.Umask)
	}
	// Everything the exec needs is prepared before the limits are set: a
	// memory limit (RLIMIT_DATA/AS) can be lower than what this Go process
	// already uses, so nothing may allocate between setrlimit and execve.
	pathp, err1 := syscall.BytePtrFromString(spec.Path)
	argvp, err2 := syscall.SlicePtrFromStrings(spec.Argv)
	envp, err3 := syscall.SlicePtrFromStrings(os.Environ())
	if err := errors.Join(err1, err2, err3); err != nil {
		starterFail(report, JOB_EXEC_FAIL1, "bad exec arguments: "+err.Error())
	}
	limits := make([]unix.Rlimit, len(spec.Limits))
	for i, l := range spec.Limits {
		limits[i] = unix.Rlimit{Cur: l.Cur, Max: l.Max}
	}
	ok := []byte("OK\n")
	fd := int(report.Fd())
	// The report pipe is close-on-exec: MOM sees "OK" and then end of file
	// once the shell has replaced the starter (or the starter has exited).
	syscall.CloseOnExec(fd)
	for i := range limits {
		if err := unix.Setrlimit(spec.Limits[i].Resource, &limits[i]); err != nil {
			starterFail(report, JOB_EXEC_RETRY, fmt.Sprintf("setrlimit %d: %v", spec.Limits[i].Resource, err))
		}
	}
	if _, err := syscall.Write(fd, ok); err != nil {
		os.Exit(1)
	}
	_, _, _ = syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(pathp)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	fmt.Fprintf(os.Stderr, "PBS: exec of shell '%s' failed\n", spec.Path)
	os.Exit(ExecFailedStatus)
}

func underlying(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// readStarterReport reads the starter's verdict: nil on "OK", otherwise a
// *StartError.
func readStarterReport(r io.Reader) error {
	br := bufio.NewReader(r)
	line, err := br.ReadString('\n')
	line = strings.TrimSpace(line)
	if line == "OK" {
		_, _ = io.Copy(io.Discard, br) // wait for the exec (close-on-exec EOF)
		return nil
	}
	if strings.HasPrefix(line, "E") {
		code, msg, _ := strings.Cut(line[1:], " ")
		if n, err := strconv.Atoi(code); err == nil {
			return &StartError{Status: n, Msg: msg}
		}
	}
	if err == nil {
		err = fmt.Errorf("unexpected starter report %q", line)
	}
	return &StartError{Status: JOB_EXEC_CMDFAIL, Msg: "job starter failed: " + err.Error()}
}

// StartError is a failed job start with the exit status MOM reports.
type StartError struct {
	Status int // JOB_EXEC_* (negative)
	Msg    string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("job start failed (%d): %s", e.Status, e.Msg)
}
