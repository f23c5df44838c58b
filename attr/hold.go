package attr

import "strconv"

// HoldBits is the bit set of a job's Hold_Types (spec 12 §3).
type HoldBits uint8

// Hold bits.
const (
	HoldUser      HoldBits = 1  // u: owner, operators, managers
	HoldOther     HoldBits = 2  // o: operators and managers
	HoldSystem    HoldBits = 4  // s: managers (and dependencies)
	HoldArray     HoldBits = 8  // internal, during array cloning; never shown
	HoldSlotLimit HoldBits = 16 // internal, array slot limit; never shown
)

// ParseHold decodes hold letters: any of n, u, o, s in any order and
// number; n clears the letters before it. Other characters are
// PBSE_BADATVAL.
func ParseHold(text string) (HoldBits, error) {
	var h HoldBits
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case 'n':
			h = 0
		case 'u':
			h |= HoldUser
		case 'o':
			h |= HoldOther
		case 's':
			h |= HoldSystem
		default:
			return 0, badValue("bad hold type " + strconv.Quote(text))
		}
	}
	return h, nil
}

// String returns the encoding: "n" when no bit at all is set, else the
// letters of the visible bits in the order s, o, u ("" when only internal
// bits are set).
func (h HoldBits) String() string {
	switch h & (HoldSystem | HoldOther | HoldUser) {
	case 0:
		if h == 0 {
			return "n"
		}
		return ""
	case HoldUser:
		return "u"
	case HoldOther:
		return "o"
	case HoldSystem:
		return "s"
	case HoldOther | HoldUser:
		return "ou"
	case HoldSystem | HoldUser:
		return "su"
	case HoldSystem | HoldOther:
		return "so"
	}
	return "sou"
}
