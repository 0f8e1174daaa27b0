// SPDX-License-Identifier: Apache-2.0

// Package admin is weir's administrators' surface: the admin API, the
// dashboard and /metrics.
package admin
