package jobmail

import "testing"

func TestExpandFormat(t *testing.T) {
	if m := expandFormat(`%i\t%j\\%x\"`, map[byte]string{'i': "1.vm", 'j': "n"}); m != "1.vm\tn\\%x\"" {
		t.Errorf("expand %q", m)
	}
}
