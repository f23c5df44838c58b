package pbs

import (
	"errors"
	"fmt"
	"syscall"
)

// The PBSE error codes the client library and the commands use by name
// (spec 02 §9). ErrorText knows the text of every code.
const (
	PBSE_NONE          = 0
	PBSE_UNKJOBID      = 15001
	PBSE_NOATTR        = 15002
	PBSE_ATTRRO        = 15003
	PBSE_IVALREQ       = 15004
	PBSE_UNKREQ        = 15005
	PBSE_PERM          = 15007
	PBSE_IFF_NOT_FOUND = 15008
	PBSE_BADHOST       = 15010
	PBSE_SYSTEM        = 15012
	PBSE_BADATVAL      = 15016
	PBSE_BADSTATE      = 15018
	PBSE_UNKQUE        = 15020
	PBSE_BADCRED       = 15021
	PBSE_PROTOCOL      = 15033
	PBSE_NOCONNECTS    = 15035
	PBSE_NOSERVER      = 15036
	PBSE_UNKRESC       = 15037
	PBSE_EXCQRESC      = 15038
	PBSE_BADSCRIPT     = 15044
	PBSE_UNKNODE       = 15064
	PBSE_NORELYMOM     = 15072
)

// pbseText holds the message of each PBSE code, trailing blanks included.
var pbseText = map[int]string{
	15000: "no error",
	15001: "Unknown Job Id",
	15002: "Undefined attribute ",
	15003: "Cannot set attribute, read only or insufficient permission ",
	15004: "Invalid request",
	15005: "Unknown request",
	15006: "Too many submit retries",
	15007: "Unauthorized Request ",
	15008: "pbs_iff command not found, unable to authenticate",
	15009: "munge executable not found, unable to authenticate",
	15010: "Access from host not allowed, or unknown host",
	15011: "Job with requested ID already exists",
	15012: " System error: ",
	15013: "PBS server internal error",
	15014: "Dependent parent job currently in routing queue",
	15015: "Unknown/illegal signal name",
	15016: "Illegal attribute or resource value for ",
	15017: "Cannot modify attribute while job running ",
	15018: "Request invalid for state of job",
	15020: "Unknown queue",
	15021: "Invalid credential",
	15022: "Expired credential",
	15023: "Queue is not enabled",
	15024: "Access to queue is denied",
	15025: "Bad UID for job execution",
	15026: "Job routing over too many hops",
	15027: "Queue already exists",
	15028: "Incompatible type",
	15029: "Cannot delete busy queue",
	15030: "Queue name too long",
	15031: "No support for requested service",
	15032: "Cannot enable queue, incomplete definition",
	15033: "Batch protocol error",
	15034: "Bad attribute list structure",
	15035: "No free connections",
	15036: "No server specified",
	15037: "Unknown resource type ",
	15038: "Job exceeds queue resource limits",
	15039: "No default queue specified",
	15040: "job is not rerunnable",
	15041: "Job rejected by all possible destinations (check syntax, queue resources, ...)",
	15042: "Time in Route Queue Expired",
	15043: "Execution server rejected request",
	15044: "(qsub) cannot access script file",
	15045: "Stage In of files failed",
	15046: "Resource temporarily unavailable",
	15047: "Bad GID for job execution",
	15048: "Maximum number of jobs already in queue",
	15049: "Checkpoint busy, may retry",
	15050: "Resource limit exceeds allowable",
	15051: "Invalid Account",
	15052: "Job already in exit state",
	15053: "Job files not copied",
	15054: "unknown job id after clean init",
	15055: "No master found for sync job set",
	15056: "Invalid Job Dependency",
	15057: "Duplicate entry in list ",
	15058: "Bad DIS based Request Protocol",
	15059: "Cannot execute at specified host because of checkpoint or stagein files",
	15060: "sister rejected",
	15061: "sister could not communicate",
	15062: "Request not allowed: Server shutting down",
	15063: "not all tasks could checkpoint",
	15064: "Unknown node ",
	15065: "Unknown node-attribute ",
	15066: "Server has no node list",
	15067: "Node name is too big",
	15068: "Node name already exists",
	15069: "Illegal value for ",
	15070: "Mutually exclusive values for ",
	15071: "Modification failed for ",
	15072: "Server could not connect to MOM",
	15073: "No time-share node available",
	15074: "Wrong job type",
	15075: "Bad ACL entry in host list",
	15076: "Maximum number of jobs already in queue for user",
	15077: "Bad type in disallowed_types list",
	15078: "Queue does not allow interactive jobs",
	15079: "Queue does not allow batch jobs",
	15080: "Queue does not allow rerunable jobs",
	15081: "Queue does not allow nonrerunable jobs",
	15082: "Unknown Array ID",
	15083: "Bad Job Array Request",
	15084: "Bad data reading job array from file ",
	15085: "Time out",
	15086: "Queue does not allow fault tolerant jobs",
	15087: "Queue does not allow fault intolerant jobs",
	15088: "Queue does not allow job arrays",
	15089: "request was relayed to a MOM",
	15090: "Timed out wating for a reply",
	15091: "Command syntax invalid",
	15092: "Error allocating memory - out of memory",
	15093: "Parameter of function was invalid",
	15201: "resource unknown",
	15202: "parameter could not be used",
	15203: "a parameter needed did not exist",
	15204: "something specified didn't exist",
	15205: "a system error occured",
	15206: "only part of reservation made",
}

// ErrorText returns the text clients print for an error number, as the
// library's pbse_to_txt does: "no error" for 0, the PBSE table for PBSE
// codes, nothing for unassigned PBSE numbers, and the C library's message
// for system errno values.
func ErrorText(code int) string {
	switch {
	case code == 0:
		return "no error"
	case code > 15000:
		return pbseText[code]
	default:
		return Strerror(syscall.Errno(code))
	}
}

// Strerror returns the C library's message for an errno value, e.g.
// "Connection refused".
func Strerror(en syscall.Errno) string {
	s := en.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// Error is a failed batch request: the server's (or the library's) error
// number and the text of the reply, empty when the reply carried none.
type Error struct {
	Code int
	Text string
}

func (e *Error) Error() string {
	if e.Text != "" {
		return e.Text
	}
	return fmt.Sprintf("error %d (%s)", e.Code, ErrorText(e.Code))
}

// Errno returns the error number behind err: the code of an *Error, the
// value of a syscall.Errno, PBSE_PROTOCOL for any other failure and 0 for
// nil. Commands exit with it (the OS keeps the low 8 bits).
func Errno(err error) int {
	if err == nil {
		return 0
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Code
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return int(en)
	}
	return PBSE_PROTOCOL
}

// ServerText returns the text of the server's reply behind err, or "" when
// there was none.
func ServerText(err error) string {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Text
	}
	return ""
}

func asErrnoIn(err error, en *syscall.Errno) bool { return errors.As(err, en) }
