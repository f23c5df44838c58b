package batchreq

import "strconv"

// Message texts (the MSG= part) of the server's error replies (spec 02
// §4.2, §5, §8, §10), verbatim.
const (
	MsgCannotDecode        = "cannot decode message"
	MsgCannotLocateJob     = "cannot locate job"
	MsgCannotLocateQue     = "cannot locate queue"
	MsgNotPermitted        = "operation not permitted"
	MsgJobNotFromClient    = "job not allowed from client"
	MsgInvalidStateExit    = "invalid state for job - EXITING"
	MsgInvalidStateDone    = "invalid state for job - COMPLETE"
	MsgPrivMParam          = "must have operator or manager privilege to use -m parameter"
	MsgPrivCParam          = "must have operator or manager privilege to use -c parameter"
	MsgJobCancelling       = "job cancel in progress"
	MsgNotCheckpointable   = "job is not checkpointable"
	MsgAlreadyRunning      = "job already running"
	MsgNotExecQueue        = "job not in execution queue"
	MsgCannotRunArray      = "cannot run a job array"
	MsgMomTimedOut         = "connection to mom timed out"
	MsgSendFailed          = "send failed - abort"
	MsgAbortedByMom        = "job was aborted by mom"
	MsgCannotUpdateFromMom = "cannot get update from mom"
	MsgStatusQueueFailed   = "status_queue failed"
	MsgNodeListEmpty       = "node list is empty - check 'server_priv/nodes' file"
	MsgCannotLocateNode    = "cannot locate specified node"
	MsgJobReqNotAuth       = "job request not authorized"
	MsgCannotRecvScript    = "cannot receive job script"
	MsgCannotAuthJobReq    = "cannot authorize jobreq"
	MsgNoOutputFile        = "no output/error file specified"
	MsgNoJobOwner          = "no job owner specified"
	MsgMaxHop              = "max job hop reached"
	MsgInvalidPriority     = "invalid job priority"
	MsgUnknownAttrPresent  = "detected presence of an unknown attribute"
	MsgCannotOpenJobFile   = "cannot open new job file"
	MsgCannotAllocJob      = "cannot alloc new job structure"
	MsgJobFileCorrupt      = "job file is corrupt"
	MsgBadArrayRange       = "Error in specified array range"
	MsgUnableToFindArray   = "unable to find array"
	MsgCannotFindArray     = "Cannot find array"
	MsgArrayRangeRead      = "Error reading array range"
	MsgArrayAlter          = "Error altering the array"
	MsgClientConnNotFound  = "cannot authenticate user. Client connection not found"
	MsgCannotAllocMem      = "cannot allocate memory"
)

// MsgHostNotAuthorized returns the MSG text of a host-ACL refusal:
// "request not authorized from host <host>".
func MsgHostNotAuthorized(host string) string { return "request not authorized from host " + host }

// MsgStartFailed returns the text of MOM's code-0 Text reply to a Commit
// whose job failed to start: "start failed on node <host>", or "start
// failed on unknown node" when host is empty.
func MsgStartFailed(host string) string {
	if host == "" {
		return "start failed on unknown node"
	}
	return "start failed on node " + host
}

// maxBaseText is the longest base text of an error reply (spec 02 §4.2).
const maxBaseText = 127

// ReplyBaseText returns the first part of an error reply's text for a
// code: the PBSE table text for codes above 15000 (empty for codes
// without one) and the strerror text for errno values. PBSE_SYSTEM
// replies are composed with SystemErrorText instead. The result is cut
// to 127 bytes.
func ReplyBaseText(code int) string {
	var s string
	if code > PBSE_FLOOR {
		s = ErrorText(code)
	} else if code != 0 {
		s = Strerror(code)
	}
	if len(s) > maxBaseText {
		s = s[:maxBaseText]
	}
	return s
}

// SystemErrorText returns the base text of a PBSE_SYSTEM reply:
// "<daemon> System error: <strerror(errno)>", e.g. "PBS_Server System
// error: No such file or directory", cut to 127 bytes.
func SystemErrorText(daemon string, errno int) string {
	s := daemon + ErrorText(PBSE_SYSTEM) + Strerror(errno)
	if len(s) > maxBaseText {
		s = s[:maxBaseText]
	}
	return s
}

// ComposeErrorText builds an error reply's text from its base text, an
// optional rejecting host (" REJHOST=<host>") and an optional message
// (" MSG=<msg>") (spec 02 §4.2).
func ComposeErrorText(base, host, msg string) string {
	s := base
	if host != "" {
		s += " REJHOST=" + host
	}
	if msg != "" {
		s += " MSG=" + msg
	}
	return s
}

// ErrorReply returns the reply rejecting a request with a code, an
// optional host and an optional message, as pbs_server composes it:
// choice Text, or choice NULL when the text is empty; auxcode 0. For
// example ErrorReply(PBSE_UNKQUE, "", MsgCannotLocateQue) carries
// "Unknown queue MSG=cannot locate queue" and ErrorReply(PBSE_UNKJOBID,
// "", "") the plain "Unknown Job Id".
func ErrorReply(code int, host, msg string) *Reply {
	return errorReply(code, ComposeErrorText(ReplyBaseText(code), host, msg))
}

// SystemErrorReply returns a PBSE_SYSTEM reply with the daemon's name
// and an errno in the base text, and an optional message.
func SystemErrorReply(daemon string, errno int, msg string) *Reply {
	return errorReply(PBSE_SYSTEM, ComposeErrorText(SystemErrorText(daemon, errno), "", msg))
}

func errorReply(code int, text string) *Reply {
	if text == "" {
		return &Reply{Code: code, Choice: BATCH_REPLY_CHOICE_NULL}
	}
	return &Reply{Code: code, Choice: BATCH_REPLY_CHOICE_Text, Text: text}
}

// BadAttrReply returns a "bad attribute" reply: the base text of the
// code, one blank and the full name (name or name.resource) of the
// offending entry, e.g. "Unknown resource type  Resource_List.foo"
// (spec 02 §4.2).
func BadAttrReply(code int, a *Attr) *Reply {
	return errorReply(code, ReplyBaseText(code)+" "+a.FullName())
}

// DecodeErrorReply returns the reply to a request that failed to decode
// (err from ReadRequest or ReadServerRequest): PBSE_DISPROTO or
// PBSE_UNKREQ with "MSG=cannot decode message". The connection is closed
// after it.
func DecodeErrorReply(err error) *Reply {
	return ErrorReply(ErrorCode(err), "", MsgCannotDecode)
}

// RejectLogText returns the message the server logs (event 0080, object
// "req_reject") when it sends an error reply: "Reject reply
// code=15001(Unknown Job Id MSG=cannot locate job), aux=0,
// type=CheckpointJob, from alice@vm" (spec 12, logging table).
func RejectLogText(reply *Reply, reqType int, user, host string) string {
	var text string
	if reply.Choice == BATCH_REPLY_CHOICE_Text {
		text = reply.Text
	}
	return "Reject reply code=" + strconv.Itoa(reply.Code) + "(" + text + "), aux=" + strconv.Itoa(reply.AuxCode) +
		", type=" + RequestName(reqType) + ", from " + user + "@" + host
}
