// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"time"

	"github.com/weir-pki/weir/acme"
)

// OrderView is an order as administrators see it.
type OrderView struct {
	ID          string            `json:"id"`
	Account     string            `json:"account"`
	Status      string            `json:"status"`
	Identifiers []acme.Identifier `json:"identifiers"`
	CreatedAt   time.Time         `json:"created_at"`
	Expires     time.Time         `json:"expires"`
	Certificate string            `json:"certificate,omitempty"`
	Error       *ProblemView      `json:"error,omitempty"`
	// Replaces is the ARI identifier of the certificate the order renews.
	Replaces string `json:"replaces,omitempty"`
}

func orderView(o *acme.Order) OrderView {
	v := OrderView{ID: string(o.ID), Account: string(o.AccountID), Status: string(o.Status), Identifiers: o.Identifiers,
		CreatedAt: o.CreatedAt, Expires: o.Expires, Certificate: o.CertSerial, Replaces: o.Replaces}
	if o.Error != nil {
		v.Error = &ProblemView{Type: string(o.Error.Type), Detail: o.Error.Detail}
	}
	return v
}
