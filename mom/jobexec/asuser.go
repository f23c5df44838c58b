package jobexec

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// asUser runs fn with the file-system identity (fsuid, fsgid, supplementary
// groups) of the user on a locked OS thread, so that files fn creates in
// user-controlled places are checked and owned as if the user had created
// them. Without root privileges fn runs unchanged.
func asUser(cred *Credentials, fn func() error) error {
	if os.Geteuid() != 0 {
		return fn()
	}
	runtime.LockOSThread()
	restored := false
	defer func() {
		// A thread whose identity could not be restored is not unlocked:
		// the runtime then terminates it with the goroutine.
		if restored {
			runtime.UnlockOSThread()
		}
	}()
	orig, err := unix.Getgroups()
	if err != nil {
		restored = true
		return fmt.Errorf("getgroups: %w", err)
	}
	groups := make([]int, len(cred.Groups))
	for i, g := range cred.Groups {
		groups[i] = int(g)
	}
	restore := func() {
		_ = unix.Setfsuid(0)
		_ = unix.Setfsgid(0)
		_ = unix.Setgroups(orig)
		prev, _ := unix.SetfsuidRetUid(0)
		restored = prev == 0
	}
	if err := unix.Setgroups(groups); err != nil {
		restore()
		return fmt.Errorf("setgroups: %w", err)
	}
	_ = unix.Setfsgid(int(cred.GID))
	_ = unix.Setfsuid(int(cred.UID))
	if prev, _ := unix.SetfsuidRetUid(int(cred.UID)); prev != int(cred.UID) {
		restore()
		return fmt.Errorf("setfsuid %d failed", cred.UID)
	}
	err = fn()
	restore()
	return err
}
