// SPDX-License-Identifier: Apache-2.0

package server

import (
	"fmt"
	"os"
	"time"
)

// InitWithConfig is weir init writing a new configuration file: unless
// force, it refuses when a file is at path; it creates the data
// directory that cfg, the configuration text parsed, names (InitDataDir)
// and only then writes text to path (WriteConfigFile), so that a failed
// initialisation leaves no new file naming a directory it did not make.
func InitWithConfig(path string, text []byte, cfg Config, force bool, now time.Time, opts InitOptions) (*InitReport, error) {
	if _, err := os.Stat(path); err == nil && !force {
		return nil, fmt.Errorf("%s exists; use -force to overwrite it, or -config to write another file", path)
	}
	rep, err := InitDataDir(cfg, now, opts)
	if err != nil {
		return nil, err
	}
	if err := WriteConfigFile(path, text); err != nil {
		return nil, err
	}
	return rep, nil
}
