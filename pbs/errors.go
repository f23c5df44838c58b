package pbs

import (
	"errors"
	"fmt"
	"syscall"

	"gopbs/batchreq"
)

// ErrorText returns the text clients print for an error number, as the
// library's pbse_to_txt does: the PBSE table (batchreq.ErrorText) for 0
// and PBSE codes, and the C library's message (batchreq.Strerror) for
// system errno values.
func ErrorText(code int) string {
	if code > 0 && code < batchreq.PBSE_FLOOR {
		return batchreq.Strerror(code)
	}
	return batchreq.ErrorText(code)
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
	return batchreq.PBSE_PROTOCOL
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
