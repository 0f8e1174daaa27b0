// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ConfigText is the commented configuration file at configFile whose
// data-dir is dataDir: every key with its default (configTemplate). weir
// init writes it, and config.example.yaml is it.
func ConfigText(configFile, dataDir string) []byte {
	dd, err := yaml.Marshal(dataDir)
	if err != nil { // a string always marshals
		panic(err)
	}
	name := strings.NewReplacer("\n", " ", "\r", " ").Replace(configFile)
	// Defaults first: the two names are the user's text, and may hold "{{".
	return []byte(strings.NewReplacer(
		"{{config-file}}", name,
		"{{data-dir}}", strings.TrimSuffix(string(dd), "\n"),
	).Replace(fillDefaults(configTemplate)))
}

// fillDefaults replaces each {{key.path}} of text, a dotted path, with
// the default of that key (defaultValue); {{config-file}} and {{data-dir}}
// stay for ConfigText.
func fillDefaults(text string) string {
	defaults := reflect.ValueOf(DefaultConfig())
	var b strings.Builder
	for {
		before, rest, ok := strings.Cut(text, "{{")
		path, after, closed := strings.Cut(rest, "}}")
		if !ok || !closed {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(before)
		if strings.Contains(path, ".") {
			b.WriteString(defaultValue(defaults, path))
		} else {
			b.WriteString("{{" + path + "}}")
		}
		text = after
	}
}

// defaultValue renders the value at the dotted key path of the defaults
// v, as the example file writes values: a block as a flow mapping of its
// keys, a list as a flow sequence, a duration in Go's syntax without zero
// units ("168h", "500ms"), and a string in double quotes when it is empty
// or holds a colon. A path that names no key is a bug of configTemplate,
// and TestExampleConfig fails on it.
func defaultValue(v reflect.Value, path string) string {
	for key := range strings.SplitSeq(path, ".") {
		f, ok := fieldByKey(v, key)
		if !ok {
			panic("configTemplate: no key " + path)
		}
		v = f
	}
	return flowYAML(v)
}

// fieldByKey returns the field of struct v whose yaml key is key.
func fieldByKey(v reflect.Value, key string) (reflect.Value, bool) {
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	for i := range v.NumField() {
		if yamlKey(v.Type().Field(i)) == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func yamlKey(f reflect.StructField) string {
	k, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return k
}

// flowYAML renders v on one line (see defaultValue).
func flowYAML(v reflect.Value) string {
	if d, ok := v.Interface().(time.Duration); ok {
		return shortDuration(d)
	}
	var parts []string
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			parts = append(parts, yamlKey(v.Type().Field(i))+": "+flowYAML(v.Field(i)))
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	case reflect.Slice:
		for i := range v.Len() {
			parts = append(parts, flowYAML(v.Index(i)))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.String:
		if s := v.String(); s != "" && !strings.Contains(s, ":") {
			return s
		}
		return strconv.Quote(v.String())
	}
	return fmt.Sprint(v.Interface())
}

// shortDuration writes d in Go's syntax without its zero units: "168h",
// "1h30m", "500ms".
func shortDuration(d time.Duration) string {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
		if t, ok := strings.CutSuffix(s, "h0m"); ok {
			s = t + "h"
		}
	}
	return s
}
