// SPDX-License-Identifier: Apache-2.0

// Package acme is weir's RFC 8555 core: the object model (accounts, orders,
// authorizations, challenges, certificates) and the types of their IDs,
// their state machines, the problem documents of RFC 8555 §6.7, and the use
// cases in Service.
//
// acme decides; it does not speak HTTP (package web does), sign (package ca
// does) or remember (the Store implementations in storage/ do). The interfaces
// it consumes — Store (one interface per role), NonceStore, Validator,
// Limits — are declared here, next to the code that calls them.
package acme
