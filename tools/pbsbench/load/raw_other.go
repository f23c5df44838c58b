//go:build !linux

package load

import (
	"errors"
	"time"
)

// rawSupported reports whether this platform has the raw submitter.
const rawSupported = false

// rawHooks connect the raw submitter to Run's accounting.
type rawHooks struct {
	claim func() bool
	ok    func(id []byte, d time.Duration)
	fail  func(err error)
}

func runRaw(*Dialer, *Job, int, rawHooks) error {
	return errors.New("raw submitter: not supported on this platform")
}
