package rpp

// crcTable is the MSB-first CRC-32 table of polynomial 0x04C11DB7.
var crcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04C11DB7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// Cksum returns the POSIX cksum CRC of b: CRC-32 (polynomial 0x04C11DB7,
// MSB first, initial value 0) over the bytes, then over the byte length in
// little-endian order using only as many bytes as the length needs, then
// inverted.
func Cksum(b []byte) uint32 {
	var crc uint32
	for _, c := range b {
		crc = crc<<8 ^ crcTable[byte(crc>>24)^c]
	}
	for n := uint64(len(b)); n != 0; n >>= 8 {
		crc = crc<<8 ^ crcTable[byte(crc>>24)^byte(n)]
	}
	return ^crc
}
