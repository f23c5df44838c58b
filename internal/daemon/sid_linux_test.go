package daemon

import "golang.org/x/sys/unix"

func getsid() (int, error) { return unix.Getsid(0) }
