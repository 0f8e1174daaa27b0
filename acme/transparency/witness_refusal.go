// SPDX-License-Identifier: Apache-2.0

package transparency

import (
	"errors"
	"fmt"
	"net/http"
)

// The reasons a witness refuses a checkpoint (c2sp.org/tlog-witness). A
// refusal is a *WitnessRefusal whose Reason is one of these, on the
// witness's side (Cosign) as on the log's (AddCheckpoint), so that
// errors.Is tells them apart on both.
var (
	// ErrWitnessMalformed: the request is not an add-checkpoint request
	// (400 Bad Request), or its old size is bigger than the checkpoint's.
	ErrWitnessMalformed = errors.New("malformed add-checkpoint request")
	// ErrWitnessBadSignature: the checkpoint carries no good signature
	// of the log's key (403 Forbidden).
	ErrWitnessBadSignature = errors.New("the checkpoint is not signed by the log's key")
	// ErrWitnessUnknownLog: the witness does not witness the
	// checkpoint's origin (404 Not Found).
	ErrWitnessUnknownLog = errors.New("unknown log")
	// ErrWitnessOldSize: the old size is not the size of the latest
	// checkpoint the witness cosigned (409 Conflict, text/x.tlog.size);
	// WitnessRefusal.Size is that size, to build the proof from.
	ErrWitnessOldSize = errors.New("the old size is not the size the witness holds")
	// ErrWitnessFork: the checkpoint has the size of the one the witness
	// cosigned but another root hash (409 Conflict): the log forked.
	ErrWitnessFork = errors.New("the checkpoint forks the one the witness cosigned")
	// ErrWitnessBadProof: the consistency proof does not verify (422
	// Unprocessable Entity): the new tree does not contain the one the
	// witness cosigned, or the proof is wrong.
	ErrWitnessBadProof = errors.New("the consistency proof does not verify")
)

// witnessStatus is the HTTP status of each refusal (c2sp.org/tlog-witness).
// The two 409s differ by their Content-Type: text/x.tlog.size (with the
// size) for ErrWitnessOldSize, text/plain for ErrWitnessFork.
var witnessStatus = map[error]int{
	ErrWitnessMalformed:    http.StatusBadRequest,
	ErrWitnessBadSignature: http.StatusForbidden,
	ErrWitnessUnknownLog:   http.StatusNotFound,
	ErrWitnessOldSize:      http.StatusConflict,
	ErrWitnessFork:         http.StatusConflict,
	ErrWitnessBadProof:     http.StatusUnprocessableEntity,
}

// tlogSizeType is the Content-Type of a 409 that gives the witness's size.
const tlogSizeType = "text/x.tlog.size"

// WitnessRefusal is a witness's refusal to cosign a checkpoint.
type WitnessRefusal struct {
	// Reason is one of the ErrWitness errors.
	Reason error
	// Size is, with ErrWitnessOldSize, the size of the latest checkpoint
	// the witness cosigned.
	Size int64
	// Detail says what was wrong (the witness's words, on the log's side).
	Detail string
}

// Error says why the witness refused.
func (e *WitnessRefusal) Error() string {
	if e.Detail == "" {
		return "witness: " + e.Reason.Error()
	}
	return fmt.Sprintf("witness: %v: %s", e.Reason, e.Detail)
}

// Unwrap is the reason, for errors.Is.
func (e *WitnessRefusal) Unwrap() error { return e.Reason }

func refuse(reason error, detail string) *WitnessRefusal {
	return &WitnessRefusal{Reason: reason, Detail: detail}
}
