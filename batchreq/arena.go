package batchreq

import (
	"bytes"
	"unsafe"

	"gopbs/dis"
)

// arena hands out the strings of one decoded reply from a few shared
// blocks instead of one allocation each; a large Status reply holds tens
// of thousands of short strings. The blocks are never written again once
// a string refers to them.
type arena struct {
	buf   []byte // unused tail of the current block
	block int    // size of the current block
}

const (
	arenaMinBlock = 1 << 10
	arenaMaxBlock = 32 << 10
	// arenaSpare is the least free space worth reading a string into;
	// below it a new block is started.
	arenaSpare = 128
)

// str decodes an unbounded STR (NUL bytes refused) into the arena.
func (a *arena) str(r *dis.Reader) (string, error) {
	if cap(a.buf) < arenaSpare {
		a.block = min(max(2*a.block, arenaMinBlock), arenaMaxBlock)
		a.buf = make([]byte, 0, a.block)
	}
	b, err := r.AppendBytes(a.buf[:0])
	if err != nil {
		return "", err
	}
	if len(b) == 0 {
		return "", nil
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", dis.ErrNullStr
	}
	if len(b) <= cap(a.buf) {
		// Read in place: the bytes now belong to the string.
		a.buf = a.buf[len(b):len(b)]
	}
	// Otherwise AppendBytes gave the string a block of its own.
	return unsafe.String(&b[0], len(b)), nil
}
