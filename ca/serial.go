// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/rand"
	"fmt"
	"math/big"
)

// serialBytes is the number of random bytes in a certificate serial number.
const serialBytes = 16

// NewSerial returns a random positive serial number of at most 128 bits,
// drawn from 16 bytes of cryptographic randomness read as an unsigned
// integer. Values of 64 bits or fewer (probability 2^-64) are redrawn, so
// every serial carries more than 64 bits of entropy as CA/B Forum rules ask.
func NewSerial() (*big.Int, error) {
	buf := make([]byte, serialBytes)
	for {
		if _, err := rand.Read(buf); err != nil {
			return nil, fmt.Errorf("ca: reading random serial: %w", err)
		}
		n := new(big.Int).SetBytes(buf)
		if n.BitLen() > 64 {
			return n, nil
		}
	}
}

// SerialHex formats a serial number as lowercase hexadecimal, zero-padded to
// an even number of digits. It is used as a certificate's ID in URLs.
// A nil serial yields "".
func SerialHex(serial *big.Int) string {
	if serial == nil {
		return ""
	}
	s := serial.Text(16)
	if len(s)%2 == 1 {
		s = "0" + s
	}
	return s
}
