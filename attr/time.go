package attr

import "strconv"

const maxTime = 1<<63 - 1 - 1 // values must stay below LONG_MAX-1

// ParseTime decodes a time value: [[[D:]H:]M:]S[.fff]. With three colons the
// first field is days. Each field is a (possibly empty) run of decimal
// digits; a fraction of .5 or more rounds up one second. Any other
// character, more than three colons or a value not below LONG_MAX−1 is
// PBSE_BADATVAL.
func ParseTime(text string) (int64, error) {
	bad := func() (int64, error) { return 0, badValue("bad time " + strconv.Quote(text)) }
	var fields [4]uint64
	nf := 1
	i := 0
	for ; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= '0' && c <= '9':
			f := &fields[nf-1]
			if *f > maxTime/10 {
				return bad()
			}
			*f = *f*10 + uint64(c-'0')
		case c == ':':
			if nf == 4 {
				return bad()
			}
			nf++
		case c == '.':
			goto fraction
		default:
			return bad()
		}
	}
fraction:
	roundUp := false
	if i < len(text) {
		for j := i + 1; j < len(text); j++ {
			c := text[j]
			if c < '0' || c > '9' {
				return bad()
			}
			if j == i+1 && c >= '5' {
				roundUp = true
			}
		}
	}
	mult := [4]uint64{1, 60, 3600, 86400}
	var total uint64
	for k := 0; k < nf; k++ {
		f := fields[nf-1-k]
		if f != 0 && f > maxTime/mult[k] {
			return bad()
		}
		total += f * mult[k]
		if total > maxTime {
			return bad()
		}
	}
	if roundUp {
		total++
	}
	if total >= maxTime {
		return bad()
	}
	return int64(total), nil
}

// FormatTime returns secs as HH:MM:SS with at least two digits per field;
// hours are not folded into days (100:00:00).
func FormatTime(secs int64) string {
	return string(appendTime(make([]byte, 0, 12), secs))
}

func appendTime(dst []byte, secs int64) []byte {
	if secs < 0 {
		dst = append(dst, '-')
		secs = -secs
	}
	h, m, s := secs/3600, secs/60%60, secs%60
	if h < 10 {
		dst = append(dst, '0')
	}
	dst = strconv.AppendInt(dst, h, 10)
	dst = append(dst, ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10))
	return dst
}
