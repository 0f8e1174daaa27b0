// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

// maxProofLines is the most consistency proof lines an add-checkpoint
// request carries (c2sp.org/tlog-witness): a proof between two trees of
// up to 2^63 leaves has at most 63 hashes.
const maxProofLines = 63

// maxAddCheckpointBody bounds an add-checkpoint request's body: 63 proof
// lines and a checkpoint with a few dozen signatures fit many times over.
const maxAddCheckpointBody = 64 << 10

// Handler serves the witness's c2sp.org/tlog-witness API at the
// submission prefix "/": POST /add-checkpoint. log receives the
// witness's own failures, and the requests it refused as a fork or for
// a proof that does not verify, which are evidence against the log (nil:
// slog.Default()); other refusals go only to the client.
func (w *Witness) Handler(log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /add-checkpoint", func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxAddCheckpointBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(rw, fmt.Sprintf("witness: the request body is over %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(rw, "witness: reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		cosig, err := w.serveAddCheckpoint(body)
		var refusal *WitnessRefusal
		switch {
		case errors.As(err, &refusal) && refusal.Reason == ErrWitnessOldSize:
			rw.Header().Set("Content-Type", tlogSizeType)
			rw.WriteHeader(http.StatusConflict)
			fmt.Fprintf(rw, "%d\n", refusal.Size)
		case errors.As(err, &refusal):
			if refusal.Reason == ErrWitnessFork || refusal.Reason == ErrWitnessBadProof {
				// Signed by the log, inconsistent with what this witness
				// cosigned: kept as evidence (c2sp.org/tlog-witness allows
				// logging it), as the request came.
				log.Warn("witness: refused a checkpoint of a known log", "reason", refusal.Reason, "detail", refusal.Detail, "request", string(body))
			}
			http.Error(rw, refusal.Detail, witnessStatus[refusal.Reason])
		case err != nil:
			log.Error("witness: add-checkpoint failed", "error", err)
			http.Error(rw, "witness: the checkpoint could not be cosigned (the witness's own failure; see its log)", http.StatusInternalServerError)
		default:
			rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
			rw.Write(cosig)
		}
	})
	return mux
}

// serveAddCheckpoint is one add-checkpoint request: its body, parsed, to
// Cosign.
func (w *Witness) serveAddCheckpoint(body []byte) ([]byte, error) {
	oldSize, proof, checkpoint, err := ParseAddCheckpoint(body)
	if err != nil {
		return nil, refuse(ErrWitnessMalformed, err.Error())
	}
	return w.Cosign(oldSize, proof, checkpoint)
}

// AddCheckpointRequest is the body of an add-checkpoint request
// (c2sp.org/tlog-witness): the old size line, the consistency proof's
// hashes one base64 line each, an empty line and the signed checkpoint.
func AddCheckpointRequest(oldSize int64, proof []tlog.Hash, signedCheckpoint []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "old %d\n", oldSize)
	for _, h := range proof {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.Write(signedCheckpoint)
	return b.Bytes()
}

// ParseAddCheckpoint reads the body of an add-checkpoint request: the
// old size, the proof and the signed checkpoint (not verified here).
func ParseAddCheckpoint(body []byte) (oldSize int64, proof []tlog.Hash, signedCheckpoint []byte, err error) {
	head, signedCheckpoint, ok := bytes.Cut(body, []byte("\n\n"))
	if !ok {
		return 0, nil, nil, errors.New("no empty line between the old size and proof lines and the checkpoint")
	}
	lines := strings.Split(string(head), "\n")
	n, ok := strings.CutPrefix(lines[0], "old ")
	if !ok {
		return 0, nil, nil, fmt.Errorf("line 1 is %q, want \"old <size>\"", lines[0])
	}
	oldSize, err = strconv.ParseInt(n, 10, 64)
	if err != nil || oldSize < 0 || n != strconv.FormatInt(oldSize, 10) {
		return 0, nil, nil, fmt.Errorf("line 1: the old size %q is not a decimal tree size without leading zeroes", n)
	}
	if len(lines)-1 > maxProofLines {
		return 0, nil, nil, fmt.Errorf("%d consistency proof lines, at most %d are allowed", len(lines)-1, maxProofLines)
	}
	for i, l := range lines[1:] {
		h, err := base64.StdEncoding.Strict().DecodeString(l)
		if err != nil || len(h) != tlog.HashSize {
			return 0, nil, nil, fmt.Errorf("line %d: the proof hash %q is not %d bytes of base64", i+2, l, tlog.HashSize)
		}
		proof = append(proof, tlog.Hash(h))
	}
	if len(signedCheckpoint) == 0 {
		return 0, nil, nil, errors.New("no checkpoint after the empty line")
	}
	return oldSize, proof, signedCheckpoint, nil
}
