// SPDX-License-Identifier: Apache-2.0

// Package renewal is weir's ARI renewal planner (RFC 9773): it chooses
// the renewal window each new certificate is told about, so that the
// renewals the CA can expect stay under a ceiling for the whole CA and
// within each account's limiter headroom.
//
//   - config.go: Config, the renewal-info block of the configuration file,
//     with the one copy of its defaults and Validate.
//   - plan.go: the Planner and placement (Place, Remove, Forget).
//   - state.go: what the planner knows, the expected renewals per hour
//     of the CA and of each account.
//   - rebuild.go: the full rebuild from the store and Run, the loop that
//     keeps the plan up to date.
//   - delta.go: the refresh from what changed in the store since.
//   - feed.go: Feed, what the planner reads of the store (every
//     acme.Inventory is one), and the types it reads.
//
// Package acme calls it when a certificate is issued (Place), revoked or
// moved into the past (Remove), or not stored after all (Forget), and
// starts Run in Service.Run.
//
// Worked example, with the defaults of a configuration file (window-start
// 0.6, window-end 0.8, window-width 0, max-renewals-per-hour 600, and the
// target 0.5) and a 90-day certificate issued at T, on the hour:
//
//	window width       lifetime/45 = 2 days = 48 hours
//	where it may lie   from T + 0.6 × 90 days = day 54 to T + 0.8 × 90 days = day 72:
//	                   its start on the hour from day 54 to day 72 − 2 = day 70 (385 starts)
//	ceiling            600 × 0.5 = 300 expected renewals an hour
//	one window         adds 1/48 of a renewal to each of its 48 hours (a client renews
//	                   at a uniform time within it)
//	one start's hours  hold 300 × 48 = 14,400 windows before they reach the ceiling
//
// Certificates issued in the same hour are placed, one by one, at the
// earliest start whose 48 hours all stay at or under 300 with the new
// window: the first 14,399 get the window from day 54 to day 56 (the
// 14,400th would bring those hours to exactly 300, and the sum of 1/48s
// rounds just past it), the next ones day 56 to 58, and so on: nine
// windows side by side, the last from day 70 to day 72, hold about
// 129,600 certificates under the ceiling. Past that every start is over
// it, and each window goes where its busiest hour is least busy, the
// earliest on ties: 140,000 such certificates end up 15,556 or 15,555 on
// each of the nine starts. One account whose limiter allows it 4 renewals
// an hour is held to 4 × 0.5 = 2 an hour, 96 windows on the same 48
// hours: 500 of its certificates issued in the same hour start 96 each on
// days 54, 56, 58, 60 and 62, and the last 20 on day 64. With
// max-renewals-per-hour 0 nothing is planned: every window is
// DefaultWindow, from day 60 (two thirds of the lifetime) to day 62.
//
// Short lifetimes are planned in minutes (Config.SlotFor): when the
// shortest configured lifetime's [window-start, window-end] is under 4
// hours (lifetimes under 20 hours), the plan's slots are minutes and the
// same rules apply per minute, the ceiling being max-renewals-per-hour/60
// a minute. A 10-minute certificate issued at T gets a window of one
// minute starting on the minute from T + 6 min (rounded down) to
// T + 7 min. A certificate shorter than its plan's slot allows (an order's
// notAfter) gets DefaultWindow, and the plan does not count it.
package renewal
