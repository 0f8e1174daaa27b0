// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// AddCheckpoint asks the witness at witnessURL (its submission prefix)
// to cosign signedCheckpoint, given the consistency proof from oldSize,
// the size of the latest checkpoint the log believes the witness
// cosigned (0 the first time, or when it does not know). It returns the
// witness's cosignature lines (check them with CountCosignatures before
// serving them: this does not know the witness's key).
//
// A refusal is a *WitnessRefusal. When the old size is not the one the
// witness holds (ErrWitnessOldSize), witnessSize is the size it holds:
// ask again with the proof from that size. hc nil is
// http.DefaultClient.
func AddCheckpoint(ctx context.Context, hc *http.Client, witnessURL string, oldSize int64, proof []tlog.Hash, signedCheckpoint []byte) (cosig []byte, witnessSize int64, err error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	url := strings.TrimSuffix(witnessURL, "/") + "/add-checkpoint"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(AddCheckpointRequest(oldSize, proof, signedCheckpoint)))
	if err != nil {
		return nil, 0, fmt.Errorf("witness %s: %w", url, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("witness %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAddCheckpointBody))
	if err != nil {
		return nil, 0, fmt.Errorf("witness %s: reading the answer: %w", url, err)
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusOK:
		if _, err := signatureLines(signedCheckpoint, body); err != nil {
			return nil, 0, fmt.Errorf("witness %s: its answer is not cosignature lines: %w", url, err)
		}
		return body, 0, nil
	case resp.StatusCode == http.StatusConflict && mediaType == tlogSizeType:
		s := strings.TrimSuffix(string(body), "\n")
		size, err := strconv.ParseInt(s, 10, 64)
		if err != nil || size < 0 || s != strconv.FormatInt(size, 10) || !strings.HasSuffix(string(body), "\n") {
			return nil, 0, fmt.Errorf("witness %s: 409 Conflict with the size %q, not a decimal tree size and a newline", url, body)
		}
		return nil, size, &WitnessRefusal{Reason: ErrWitnessOldSize, Size: size,
			Detail: fmt.Sprintf("%s holds size %d, not %d", url, size, oldSize)}
	case resp.StatusCode == http.StatusConflict:
		return nil, 0, refuse(ErrWitnessFork, answer(url, body))
	}
	for reason, status := range witnessStatus {
		if status == resp.StatusCode && status != http.StatusConflict {
			return nil, 0, refuse(reason, answer(url, body))
		}
	}
	return nil, 0, fmt.Errorf("witness %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
}

// answer is a witness's refusal as a WitnessRefusal's detail.
func answer(url string, body []byte) string {
	const most = 1024
	if len(body) > most {
		body = body[:most]
	}
	return fmt.Sprintf("%s says %q", url, strings.TrimSpace(string(body)))
}

// RequestCosignature gets the cosignature of the witness at witnessURL,
// whose verifier key is witnessKey, on signedCheckpoint, the log's
// checkpoint (signed by logKey) of size n. oldSize is the size the log
// believes the witness holds (0 when it does not know); prove(old)
// returns the consistency proof from old to n. When the witness holds
// another size, the request is made once more from that size. It returns
// the witness's signature lines, checked with witnessKey (the lines of
// other keys left out), for AppendCosignatures, and the size the witness
// now holds (n), to start from next time.
func RequestCosignature(ctx context.Context, hc *http.Client, witnessURL string, witnessKey, logKey note.Verifier, signedCheckpoint []byte, oldSize int64, prove func(old int64) ([]tlog.Hash, error)) ([]byte, int64, error) {
	c, err := OpenCheckpoint(signedCheckpoint, logKey)
	if err != nil {
		return nil, 0, err
	}
	var cosig []byte
	for try := 0; try < 2; try++ {
		if oldSize > c.Size {
			return nil, oldSize, fmt.Errorf("witness %s holds size %d of %s, past the checkpoint's %d", witnessURL, oldSize, c.Origin, c.Size)
		}
		var proof []tlog.Hash
		if oldSize > 0 && oldSize < c.Size {
			if proof, err = prove(oldSize); err != nil {
				return nil, oldSize, fmt.Errorf("the consistency proof from %d to %d: %w", oldSize, c.Size, err)
			}
		}
		var held int64
		cosig, held, err = AddCheckpoint(ctx, hc, witnessURL, oldSize, proof, signedCheckpoint)
		if !errors.Is(err, ErrWitnessOldSize) {
			break
		}
		oldSize = held
	}
	if err != nil {
		return nil, oldSize, err
	}
	sigs, err := signatureLines(signedCheckpoint, cosig)
	if err != nil {
		return nil, oldSize, err
	}
	var own []byte
	for _, s := range sigs {
		if s.Name == witnessKey.Name() && s.Hash == witnessKey.KeyHash() {
			own = fmt.Appendf(own, "— %s %s\n", s.Name, s.Base64)
		}
	}
	withCosig, err := AppendCosignatures(signedCheckpoint, own)
	if err != nil {
		return nil, oldSize, fmt.Errorf("witness %s answered no signature of its key %s", witnessURL, keyID(witnessKey))
	}
	if n, _, err := CountCosignatures(withCosig, logKey, []note.Verifier{witnessKey}); err != nil || n != 1 {
		return nil, oldSize, fmt.Errorf("witness %s: its cosignature does not verify with %s: %v", witnessURL, keyID(witnessKey), err)
	}
	return own, c.Size, nil
}
