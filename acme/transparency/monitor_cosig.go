// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"fmt"

	"golang.org/x/mod/sumdb/note"
)

// MonitorKeys reads a monitor's keys: the log's note verifier key
// ("name+hash+base64", as NewNoteSigner returns it) and the witnesses'
// tlog-cosignature/v1 keys (ParseWitnessKey), for MonitorConfig's
// LogKey and Witnesses.
func MonitorKeys(logKey string, witnessKeys []string) (note.Verifier, []note.Verifier, error) {
	log, err := ParseVerifierKey(logKey)
	if err != nil {
		return nil, nil, fmt.Errorf("log key: %w", err)
	}
	var witnesses []note.Verifier
	for _, k := range witnessKeys {
		w, err := ParseWitnessKey(k)
		if err != nil {
			return nil, nil, err
		}
		witnesses = append(witnesses, w)
	}
	return log, witnesses, nil
}
