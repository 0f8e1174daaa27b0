// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"time"

	"github.com/weir-pki/weir/acme"
)

// AccountView is an account as administrators see it.
type AccountView struct {
	ID            string    `json:"id"`
	Status        string    `json:"status"`
	Contact       []string  `json:"contact"`
	KeyThumbprint string    `json:"key_thumbprint"`
	CreatedAt     time.Time `json:"created_at"`
	CreatedIP     string    `json:"created_ip"`
}

func accountView(a *acme.Account) AccountView {
	c := a.Contact
	if c == nil {
		c = []string{}
	}
	return AccountView{ID: string(a.ID), Status: string(a.Status), Contact: c, KeyThumbprint: string(a.KeyThumbprint), CreatedAt: a.CreatedAt, CreatedIP: a.CreatedIP}
}
