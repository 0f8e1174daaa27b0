// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

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
