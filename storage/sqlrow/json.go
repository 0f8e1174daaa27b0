// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"encoding/json"
	"fmt"
)

// The JSON columns, shared by both SQL stores. Errors name the column
// (what) but not the store.

// ToJSON encodes v for a JSON column.
func ToJSON(what string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("%s: encoding: %w", what, err)
	}
	return string(b), nil
}

// FromJSON decodes a JSON column into v.
func FromJSON(what, s string, v any) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("%s: decoding: %w", what, err)
	}
	return nil
}

// StringsJSON encodes a string slice, nil as an empty array.
func StringsJSON[S ~string](what string, ss []S) (string, error) {
	if len(ss) == 0 {
		return "[]", nil
	}
	return ToJSON(what, ss)
}

// StringsFromJSON decodes a string slice, an empty array as nil.
func StringsFromJSON(what, s string) ([]string, error) {
	var ss []string
	if err := FromJSON(what, s, &ss); err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		return nil, nil
	}
	return ss, nil
}

// NullableJSON encodes p for a nullable JSON column (a problem
// document): nil as NULL.
func NullableJSON[T any](what string, p *T) (*string, error) {
	if p == nil {
		return nil, nil
	}
	s, err := ToJSON(what, p)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// FromNullableJSON decodes a nullable JSON column: NULL as nil.
func FromNullableJSON[T any](what string, s *string) (*T, error) {
	if s == nil {
		return nil, nil
	}
	p := new(T)
	if err := FromJSON(what, *s, p); err != nil {
		return nil, err
	}
	return p, nil
}
