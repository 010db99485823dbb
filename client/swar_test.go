package client

import (
	"strconv"
	"testing"
)

// TestSWARDigits checks the eight-bytes-at-a-time digit parser against
// strconv for every length, with every byte that may follow the digits.
func TestSWARDigits(t *testing.T) {
	for _, num := range []string{"0", "7", "10", "99", "305", "4096", "12345", "999999", "1234567", "9999999", "0000001"} {
		for _, tail := range []string{",1234567", "]}", " ,", "\xff\xff\xff\xff\xff\xff\xff\xff", "/:.eE-+\x00\x00\x00\x00\x00\x00"} {
			b := []byte(num + tail)
			n, digits, ok := swarDigits(b)
			want, _ := strconv.ParseInt(num, 10, 64)
			if len(b) < 8 {
				if ok {
					t.Errorf("%q: parsed %d from fewer than 8 bytes", b, n)
				}
				continue
			}
			if !ok || n != want || digits != len(num) {
				t.Errorf("%q: %d (%d digits, %v), want %d (%d digits)", b, n, digits, ok, want, len(num))
			}
		}
	}
	for _, b := range []string{"12345678", "123456789,", ",1234567", "a1234567", "-1234567"} {
		if _, _, ok := swarDigits([]byte(b)); ok {
			t.Errorf("%q: parsed; the caller should parse it byte by byte", b)
		}
	}
}
