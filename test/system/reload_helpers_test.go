// SPDX-License-Identifier: Apache-2.0

package system

import (
	"github.com/weir-pki/weir/server"
)

// reloadWith writes the configuration edit makes of the running one and
// reloads it live, as a save of the file does.
func (e *env) reloadWith(edit func(*server.Config)) {
	e.t.Helper()
	cfg := e.cfg
	cfg.CA.Profiles = server.DefaultConfig().CA.Profiles
	edit(&cfg)
	e.writeConfig(cfg)
	if err := e.srv.Reload("test"); err != nil {
		e.t.Fatalf("reload: %v", err)
	}
}
