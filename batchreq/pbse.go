package batchreq

import (
	"strconv"
	"strings"
	"syscall"
)

// PBSE_* error codes (spec 02 §9). Codes at or below 15000 that travel in
// replies are Unix errno values.
const (
	PBSE_NONE               = 0
	PBSE_FLOOR              = 15000
	PBSE_UNKJOBID           = 15001
	PBSE_NOATTR             = 15002
	PBSE_ATTRRO             = 15003
	PBSE_IVALREQ            = 15004
	PBSE_UNKREQ             = 15005
	PBSE_TOOMANY            = 15006
	PBSE_PERM               = 15007
	PBSE_IFF_NOT_FOUND      = 15008
	PBSE_MUNGE_NOT_FOUND    = 15009
	PBSE_BADHOST            = 15010
	PBSE_JOBEXIST           = 15011
	PBSE_SYSTEM             = 15012
	PBSE_INTERNAL           = 15013
	PBSE_REGROUTE           = 15014
	PBSE_UNKSIG             = 15015
	PBSE_BADATVAL           = 15016
	PBSE_MODATRRUN          = 15017
	PBSE_BADSTATE           = 15018
	PBSE_GAP017             = 15019
	PBSE_UNKQUE             = 15020
	PBSE_BADCRED            = 15021
	PBSE_EXPIRED            = 15022
	PBSE_QUNOENB            = 15023
	PBSE_QACESS             = 15024
	PBSE_BADUSER            = 15025
	PBSE_HOPCOUNT           = 15026
	PBSE_QUEEXIST           = 15027
	PBSE_ATTRTYPE           = 15028
	PBSE_QUEBUSY            = 15029
	PBSE_QUENBIG            = 15030
	PBSE_NOSUP              = 15031
	PBSE_QUENOEN            = 15032
	PBSE_PROTOCOL           = 15033
	PBSE_BADATLST           = 15034
	PBSE_NOCONNECTS         = 15035
	PBSE_NOSERVER           = 15036
	PBSE_UNKRESC            = 15037
	PBSE_EXCQRESC           = 15038
	PBSE_QUENODFLT          = 15039
	PBSE_NORERUN            = 15040
	PBSE_ROUTEREJ           = 15041
	PBSE_ROUTEEXPD          = 15042
	PBSE_MOMREJECT          = 15043
	PBSE_BADSCRIPT          = 15044
	PBSE_STAGEIN            = 15045
	PBSE_RESCUNAV           = 15046
	PBSE_BADGRP             = 15047
	PBSE_MAXQUED            = 15048
	PBSE_CKPBSY             = 15049
	PBSE_EXLIMIT            = 15050
	PBSE_BADACCT            = 15051
	PBSE_ALRDYEXIT          = 15052
	PBSE_NOCOPYFILE         = 15053
	PBSE_CLEANEDOUT         = 15054
	PBSE_NOSYNCMSTR         = 15055
	PBSE_BADDEPEND          = 15056
	PBSE_DUPLIST            = 15057
	PBSE_DISPROTO           = 15058
	PBSE_EXECTHERE          = 15059
	PBSE_SISREJECT          = 15060
	PBSE_SISCOMM            = 15061
	PBSE_SVRDOWN            = 15062
	PBSE_CKPSHORT           = 15063
	PBSE_UNKNODE            = 15064
	PBSE_UNKNODEATR         = 15065
	PBSE_NONODES            = 15066
	PBSE_NODENBIG           = 15067
	PBSE_NODEEXIST          = 15068
	PBSE_BADNDATVAL         = 15069
	PBSE_MUTUALEX           = 15070
	PBSE_GMODERR            = 15071
	PBSE_NORELYMOM          = 15072
	PBSE_NOTSNODE           = 15073
	PBSE_JOBTYPE            = 15074
	PBSE_BADACLHOST         = 15075
	PBSE_MAXUSERQUED        = 15076
	PBSE_BADDISALLOWTYPE    = 15077
	PBSE_NOINTERACTIVE      = 15078
	PBSE_NOBATCH            = 15079
	PBSE_NORERUNABLE        = 15080
	PBSE_NONONRERUNABLE     = 15081
	PBSE_UNKARRAYID         = 15082
	PBSE_BAD_ARRAY_REQ      = 15083
	PBSE_BAD_ARRAY_DATA     = 15084
	PBSE_TIMEOUT            = 15085
	PBSE_NOFAULTTOLERANT    = 15086
	PBSE_NOFAULTINTOLERANT  = 15087
	PBSE_NOJOBARRAYS        = 15088
	PBSE_RELAYED_TO_MOM     = 15089
	PBSE_READ_REPLY_TIMEOUT = 15090
	PBSE_INVALID_SYNTAX     = 15091
	PBSE_MEM_MALLOC         = 15092
	PBSE_BAD_PARAMETER      = 15093
	PBSE_CEILING            = 15094

	PBSE_RMFLOOR    = 15200
	PBSE_RMUNKNOWN  = 15201
	PBSE_RMBADPARAM = 15202
	PBSE_RMNOPARAM  = 15203
	PBSE_RMEXIST    = 15204
	PBSE_RMSYSTEM   = 15205
	PBSE_RMPART     = 15206
	PBSE_RMCEILING  = 15207
)

// Resource-monitor error codes, aliases of the PBSE_RM* codes.
const (
	RM_ERR_UNKNOWN  = PBSE_RMUNKNOWN
	RM_ERR_BADPARAM = PBSE_RMBADPARAM
	RM_ERR_NOPARAM  = PBSE_RMNOPARAM
	RM_ERR_EXIST    = PBSE_RMEXIST
	RM_ERR_SYSTEM   = PBSE_RMSYSTEM
)

// pbseText holds the message texts of PBSE_FLOOR … PBSE_CEILING-1,
// verbatim (trailing blanks and misspellings included). An empty entry
// means the code has no text.
var pbseText = [PBSE_CEILING - PBSE_FLOOR]string{
	0:                                    "no error",
	PBSE_UNKJOBID - PBSE_FLOOR:           "Unknown Job Id",
	PBSE_NOATTR - PBSE_FLOOR:             "Undefined attribute ",
	PBSE_ATTRRO - PBSE_FLOOR:             "Cannot set attribute, read only or insufficient permission ",
	PBSE_IVALREQ - PBSE_FLOOR:            "Invalid request",
	PBSE_UNKREQ - PBSE_FLOOR:             "Unknown request",
	PBSE_TOOMANY - PBSE_FLOOR:            "Too many submit retries",
	PBSE_PERM - PBSE_FLOOR:               "Unauthorized Request ",
	PBSE_IFF_NOT_FOUND - PBSE_FLOOR:      "pbs_iff command not found, unable to authenticate",
	PBSE_MUNGE_NOT_FOUND - PBSE_FLOOR:    "munge executable not found, unable to authenticate",
	PBSE_BADHOST - PBSE_FLOOR:            "Access from host not allowed, or unknown host",
	PBSE_JOBEXIST - PBSE_FLOOR:           "Job with requested ID already exists",
	PBSE_SYSTEM - PBSE_FLOOR:             " System error: ",
	PBSE_INTERNAL - PBSE_FLOOR:           "PBS server internal error",
	PBSE_REGROUTE - PBSE_FLOOR:           "Dependent parent job currently in routing queue",
	PBSE_UNKSIG - PBSE_FLOOR:             "Unknown/illegal signal name",
	PBSE_BADATVAL - PBSE_FLOOR:           "Illegal attribute or resource value for ",
	PBSE_MODATRRUN - PBSE_FLOOR:          "Cannot modify attribute while job running ",
	PBSE_BADSTATE - PBSE_FLOOR:           "Request invalid for state of job",
	PBSE_UNKQUE - PBSE_FLOOR:             "Unknown queue",
	PBSE_BADCRED - PBSE_FLOOR:            "Invalid credential",
	PBSE_EXPIRED - PBSE_FLOOR:            "Expired credential",
	PBSE_QUNOENB - PBSE_FLOOR:            "Queue is not enabled",
	PBSE_QACESS - PBSE_FLOOR:             "Access to queue is denied",
	PBSE_BADUSER - PBSE_FLOOR:            "Bad UID for job execution",
	PBSE_HOPCOUNT - PBSE_FLOOR:           "Job routing over too many hops",
	PBSE_QUEEXIST - PBSE_FLOOR:           "Queue already exists",
	PBSE_ATTRTYPE - PBSE_FLOOR:           "Incompatible type",
	PBSE_QUEBUSY - PBSE_FLOOR:            "Cannot delete busy queue",
	PBSE_QUENBIG - PBSE_FLOOR:            "Queue name too long",
	PBSE_NOSUP - PBSE_FLOOR:              "No support for requested service",
	PBSE_QUENOEN - PBSE_FLOOR:            "Cannot enable queue, incomplete definition",
	PBSE_PROTOCOL - PBSE_FLOOR:           "Batch protocol error",
	PBSE_BADATLST - PBSE_FLOOR:           "Bad attribute list structure",
	PBSE_NOCONNECTS - PBSE_FLOOR:         "No free connections",
	PBSE_NOSERVER - PBSE_FLOOR:           "No server specified",
	PBSE_UNKRESC - PBSE_FLOOR:            "Unknown resource type ",
	PBSE_EXCQRESC - PBSE_FLOOR:           "Job exceeds queue resource limits",
	PBSE_QUENODFLT - PBSE_FLOOR:          "No default queue specified",
	PBSE_NORERUN - PBSE_FLOOR:            "job is not rerunnable",
	PBSE_ROUTEREJ - PBSE_FLOOR:           "Job rejected by all possible destinations (check syntax, queue resources, ...)",
	PBSE_ROUTEEXPD - PBSE_FLOOR:          "Time in Route Queue Expired",
	PBSE_MOMREJECT - PBSE_FLOOR:          "Execution server rejected request",
	PBSE_BADSCRIPT - PBSE_FLOOR:          "(qsub) cannot access script file",
	PBSE_STAGEIN - PBSE_FLOOR:            "Stage In of files failed",
	PBSE_RESCUNAV - PBSE_FLOOR:           "Resource temporarily unavailable",
	PBSE_BADGRP - PBSE_FLOOR:             "Bad GID for job execution",
	PBSE_MAXQUED - PBSE_FLOOR:            "Maximum number of jobs already in queue",
	PBSE_CKPBSY - PBSE_FLOOR:             "Checkpoint busy, may retry",
	PBSE_EXLIMIT - PBSE_FLOOR:            "Resource limit exceeds allowable",
	PBSE_BADACCT - PBSE_FLOOR:            "Invalid Account",
	PBSE_ALRDYEXIT - PBSE_FLOOR:          "Job already in exit state",
	PBSE_NOCOPYFILE - PBSE_FLOOR:         "Job files not copied",
	PBSE_CLEANEDOUT - PBSE_FLOOR:         "unknown job id after clean init",
	PBSE_NOSYNCMSTR - PBSE_FLOOR:         "No master found for sync job set",
	PBSE_BADDEPEND - PBSE_FLOOR:          "Invalid Job Dependency",
	PBSE_DUPLIST - PBSE_FLOOR:            "Duplicate entry in list ",
	PBSE_DISPROTO - PBSE_FLOOR:           "Bad DIS based Request Protocol",
	PBSE_EXECTHERE - PBSE_FLOOR:          "Cannot execute at specified host because of checkpoint or stagein files",
	PBSE_SISREJECT - PBSE_FLOOR:          "sister rejected",
	PBSE_SISCOMM - PBSE_FLOOR:            "sister could not communicate",
	PBSE_SVRDOWN - PBSE_FLOOR:            "Request not allowed: Server shutting down",
	PBSE_CKPSHORT - PBSE_FLOOR:           "not all tasks could checkpoint",
	PBSE_UNKNODE - PBSE_FLOOR:            "Unknown node ",
	PBSE_UNKNODEATR - PBSE_FLOOR:         "Unknown node-attribute ",
	PBSE_NONODES - PBSE_FLOOR:            "Server has no node list",
	PBSE_NODENBIG - PBSE_FLOOR:           "Node name is too big",
	PBSE_NODEEXIST - PBSE_FLOOR:          "Node name already exists",
	PBSE_BADNDATVAL - PBSE_FLOOR:         "Illegal value for ",
	PBSE_MUTUALEX - PBSE_FLOOR:           "Mutually exclusive values for ",
	PBSE_GMODERR - PBSE_FLOOR:            "Modification failed for ",
	PBSE_NORELYMOM - PBSE_FLOOR:          "Server could not connect to MOM",
	PBSE_NOTSNODE - PBSE_FLOOR:           "No time-share node available",
	PBSE_JOBTYPE - PBSE_FLOOR:            "Wrong job type",
	PBSE_BADACLHOST - PBSE_FLOOR:         "Bad ACL entry in host list",
	PBSE_MAXUSERQUED - PBSE_FLOOR:        "Maximum number of jobs already in queue for user",
	PBSE_BADDISALLOWTYPE - PBSE_FLOOR:    "Bad type in disallowed_types list",
	PBSE_NOINTERACTIVE - PBSE_FLOOR:      "Queue does not allow interactive jobs",
	PBSE_NOBATCH - PBSE_FLOOR:            "Queue does not allow batch jobs",
	PBSE_NORERUNABLE - PBSE_FLOOR:        "Queue does not allow rerunable jobs",
	PBSE_NONONRERUNABLE - PBSE_FLOOR:     "Queue does not allow nonrerunable jobs",
	PBSE_UNKARRAYID - PBSE_FLOOR:         "Unknown Array ID",
	PBSE_BAD_ARRAY_REQ - PBSE_FLOOR:      "Bad Job Array Request",
	PBSE_BAD_ARRAY_DATA - PBSE_FLOOR:     "Bad data reading job array from file ",
	PBSE_TIMEOUT - PBSE_FLOOR:            "Time out",
	PBSE_NOFAULTTOLERANT - PBSE_FLOOR:    "Queue does not allow fault tolerant jobs",
	PBSE_NOFAULTINTOLERANT - PBSE_FLOOR:  "Queue does not allow fault intolerant jobs",
	PBSE_NOJOBARRAYS - PBSE_FLOOR:        "Queue does not allow job arrays",
	PBSE_RELAYED_TO_MOM - PBSE_FLOOR:     "request was relayed to a MOM",
	PBSE_READ_REPLY_TIMEOUT - PBSE_FLOOR: "Timed out wating for a reply",
	PBSE_INVALID_SYNTAX - PBSE_FLOOR:     "Command syntax invalid",
	PBSE_MEM_MALLOC - PBSE_FLOOR:         "Error allocating memory - out of memory",
	PBSE_BAD_PARAMETER - PBSE_FLOOR:      "Parameter of function was invalid",
}

// rmText holds the texts of PBSE_RMUNKNOWN … PBSE_RMPART.
var rmText = [...]string{
	"resource unknown",
	"parameter could not be used",
	"a parameter needed did not exist",
	"something specified didn't exist",
	"a system error occured",
	"only part of reservation made",
}

// ErrorText returns the message text of a PBSE code exactly as the
// table has it, trailing blanks included: "no error" for 0 and
// PBSE_FLOOR, the table text for 15001–15093, 15201–15206 and the sched
// object codes 15215–15226 (partition.go), and "" for
// other codes above 15000 (codes without a text). For codes below 15000
// it returns "" too; see ReplyBaseText for the errno texts.
func ErrorText(code int) string {
	switch {
	case code == PBSE_NONE:
		return "no error"
	case code >= PBSE_FLOOR && code < PBSE_CEILING:
		return pbseText[code-PBSE_FLOOR]
	case code >= PBSE_RMUNKNOWN && code <= PBSE_RMPART:
		return rmText[code-PBSE_RMUNKNOWN]
	case IsSchedError(code):
		return schedText[code-PBSE_SCHEDFLOOR]
	}
	return ""
}

// Strerror approximates the C library's strerror text for an errno value
// as TORQUE clients and servers print it (for example "No such file or
// directory"): the Go text with its first letter in upper case.
func Strerror(errno int) string {
	switch {
	case errno == 0:
		return "Success"
	case errno < 0:
		return "Unknown error " + strconv.Itoa(errno)
	}
	s := syscall.Errno(errno).Error()
	if strings.HasPrefix(s, "errno ") {
		return "Unknown error " + s[len("errno "):]
	}
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
