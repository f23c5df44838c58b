package store

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
)

// The write-ahead log's records: a header (length, CRC, generation) and
// the encoded operations of one round.

func encodeOps(ops []Op) []byte {
	return appendOps(binary.AppendUvarint(nil, uint64(len(ops))), ops)
}

// appendOps appends the encoding of ops (without their count).
func appendOps(b []byte, ops []Op) []byte {
	for _, op := range ops {
		kind := byte(0)
		if op.Delete {
			kind = 1
		}
		b = append(b, kind)
		b = binary.AppendUvarint(b, uint64(len(op.Bucket)))
		b = append(b, op.Bucket...)
		b = binary.AppendUvarint(b, uint64(len(op.Key)))
		b = append(b, op.Key...)
		b = binary.AppendUvarint(b, uint64(len(op.Value)))
		b = append(b, op.Value...)
	}
	return b
}

var errCorrupt = errors.New("store: corrupt log record")

func decodeOps(b []byte) ([]Op, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errCorrupt
	}
	b = b[k:]
	ops := make([]Op, 0, n)
	for i := uint64(0); i < n; i++ {
		if len(b) < 1 {
			return nil, errCorrupt
		}
		op := Op{Delete: b[0] == 1}
		b = b[1:]
		var fields [3][]byte
		for f := range fields {
			l, k := binary.Uvarint(b)
			if k <= 0 || l > uint64(len(b)-k) {
				return nil, errCorrupt
			}
			fields[f] = b[k : k+int(l)]
			b = b[k+int(l):]
		}
		op.Bucket, op.Key = string(fields[0]), string(fields[1])
		if !op.Delete {
			op.Value = append([]byte{}, fields[2]...)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// recordHeader is the size of a log record's header.
const recordHeader = 16

func appendRecord(dst []byte, gen uint64, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recordHeader)...)
	dst = append(dst, payload...)
	sealRecord(dst[start:], gen)
	return dst
}

// sealRecord fills in the header of rec, a record whose payload follows
// recordHeader reserved bytes.
func sealRecord(rec []byte, gen uint64) {
	binary.BigEndian.PutUint32(rec, uint32(len(rec)-recordHeader))
	binary.BigEndian.PutUint64(rec[8:], gen)
	binary.BigEndian.PutUint32(rec[4:], crc32.Update(crc32.Checksum(rec[8:16], crcTable), crcTable, rec[recordHeader:]))
}

// readRecord reads one record and returns its generation and payload.
func readRecord(r io.Reader) (uint64, []byte, error) {
	var hdr [recordHeader]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	if n > 1<<30 {
		return 0, nil, errCorrupt
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return 0, nil, err
	}
	if crc32.Update(crc32.Checksum(hdr[8:], crcTable), crcTable, p) != binary.BigEndian.Uint32(hdr[4:8]) {
		return 0, nil, errCorrupt
	}
	return binary.BigEndian.Uint64(hdr[8:]), p, nil
}
