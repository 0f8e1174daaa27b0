// Package admin is weir's administrators' surface: the admin API, the
// dashboard and /metrics.
package admin
