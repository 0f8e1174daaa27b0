// SPDX-License-Identifier: Apache-2.0

package server

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// problemLines are the lines of a configuration error, one per problem.
func problemLines(err error) []string {
	var ps *ConfigProblems
	if errors.As(err, &ps) {
		return ps.Lines()
	}
	if err != nil {
		return []string{err.Error()}
	}
	return nil
}

// TestReloadReportsLikeCheckConfig: a refused reload logs the lines
// check-config prints for the file, and the running configuration stays.
func TestReloadReportsLikeCheckConfig(t *testing.T) {
	e, logs := startLoggedEnv(t, nil)
	text := "rate-limiting:\n  order-creation:\n    order-brust: 3\n    orders-per-account-per-hour: big\n  global: {burst: 0}\n"
	e.writeConfigBytes([]byte(text))
	err := e.srv.reload("test")
	if err == nil {
		t.Fatal("a file with three problems was reloaded")
	}
	var out, errw bytes.Buffer
	if code := builder.Run(t, []string{"check-config", e.srv.configPath}, &out, &errw); code != 1 {
		t.Fatalf("check-config: exit %d", code)
	}
	want := strings.TrimSuffix(errw.String(), "\n")
	if err.Error() != want || strings.Count(want, "\n") != 2 {
		t.Errorf("reload refused with\n%v\nwant the three lines of check-config:\n%s", err, want)
	}
	if logged := logs.lines(`msg="configuration reload refused; the running configuration stays" trigger=test`, "err="+strconv.Quote(want)); len(logged) != 1 {
		t.Errorf("the log does not hold the refusal with check-config's lines %q:\n%s", want, strings.Join(logs.lines(""), "\n"))
	}
	if e.srv.currentConfig().RateLimiting.Global.Burst == 0 {
		t.Error("the refused file's global burst was applied")
	}
}

// TestReadConfigValidateLines: readConfig fills any struct and maps each
// "<key path>: <message>" error of its validate func to the line of the
// key, or of the nearest enclosing key the file sets, or to none.
func TestReadConfigValidateLines(t *testing.T) {
	type limit struct {
		Limit string `yaml:"limit"`
		Burst int    `yaml:"burst"`
	}
	type file struct {
		Name  string `yaml:"name"`
		Block struct {
			Size  int      `yaml:"size"`
			Items []string `yaml:"items"`
		} `yaml:"block"`
		Limits []limit `yaml:"limits"`
	}
	data := []byte("name: x\nblock:\n  items:\n    - a\n    - b\nlimits:\n  - limit: one\n  - limit: two\n    burst: 3\n")
	var f file
	f.Block.Size = 7
	err := readConfig("FILE", data, &f, func() error {
		if f.Limits[1].Burst != 3 || f.Block.Size != 7 || len(f.Block.Items) != 2 {
			t.Errorf("decoded %+v, want the file over the defaults", f)
		}
		return errors.Join(
			errors.New("limits[1].burst: the two limit has no burst"),
			errors.New("block.items[1]: not allowed"),
			errors.New("block.size: too small"),
			errors.New("other.key: not in the file at all"),
			errors.New("something without a key"),
			errors.New("name: two lines\nblock: the second"),
		)
	})
	want := []string{
		"FILE:1: name: two lines",
		"FILE:2: block.size: too small",
		"FILE:2: block: the second",
		"FILE:5: block.items[1]: not allowed",
		"FILE:9: limits[1].burst: the two limit has no burst",
		"FILE: other.key: not in the file at all",
		"FILE: something without a key",
	}
	if got := problemLines(err); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
