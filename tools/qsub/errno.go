package main

import (
	"errors"
	"syscall"
)

func toErrno(err error) syscall.Errno {
	var en syscall.Errno
	if errors.As(err, &en) {
		return en
	}
	return syscall.EIO
}
