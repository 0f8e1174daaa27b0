// SPDX-License-Identifier: Apache-2.0

package dnstest

import (
	"bufio"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// canonicalName returns the lookup key for name: lower case, without a
// trailing dot.
func canonicalName(name string) string {
	return strings.ToLower(strings.TrimSuffix(name, "."))
}

// SetTXT replaces the TXT records of name with values. The name is
// case-insensitive and may be given with or without a trailing dot. Calling
// SetTXT with no values removes the records, like ClearTXT.
func (s *Server) SetTXT(name string, values ...string) {
	key := canonicalName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(values) == 0 {
		delete(s.txt, key)
		return
	}
	s.txt[key] = slices.Clone(values)
}

// AddTXT adds one TXT record with value to name, keeping existing records.
func (s *Server) AddTXT(name, value string) {
	key := canonicalName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.txt[key] = append(s.txt[key], value)
}

// ClearTXT removes all TXT records set for name. Records served from the
// directory given to SetTXTDir are not affected.
func (s *Server) ClearTXT(name string) {
	key := canonicalName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.txt, key)
}

// SetA overrides the addresses of name: IPv4 addresses are served as A
// records and IPv6 addresses as AAAA records (IPv4-mapped IPv6 addresses
// count as IPv4). Invalid addresses are ignored. Calling SetA with no valid
// addresses makes the server answer NXDOMAIN for every query for name.
func (s *Server) SetA(name string, ips ...netip.Addr) {
	key := canonicalName(name)
	list := normalizeAddrs(ips)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addrs[key] = list
}

// ClearA removes the override set for name by SetA, so that name is again
// answered with the default addresses.
func (s *Server) ClearA(name string) {
	key := canonicalName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.addrs, key)
}

// SetDefaultAddrs replaces the addresses served for every name that has no
// override set by SetA. IPv4 addresses are served as A records and IPv6
// addresses as AAAA records; with no addresses, such names have no A or AAAA
// records (but still exist).
func (s *Server) SetDefaultAddrs(ips ...netip.Addr) {
	list := normalizeAddrs(ips)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaults = list
}

// SetTXTDir makes the server also serve TXT records from files in dir: the
// file named after the lower-case name without its trailing dot holds one
// record value per line (empty lines are skipped). Files are read on every
// query, so they may be changed while the server runs. An empty dir turns the
// feature off.
func (s *Server) SetTXTDir(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.txtDir = dir
}

// normalizeAddrs returns the valid addresses of ips with IPv4-mapped IPv6
// addresses unmapped. The result is never nil.
func normalizeAddrs(ips []netip.Addr) []netip.Addr {
	list := make([]netip.Addr, 0, len(ips))
	for _, ip := range ips {
		if ip.IsValid() {
			list = append(list, ip.Unmap())
		}
	}
	return list
}

// lookupAddrs returns the addresses of the canonical name key and whether
// the name exists.
func (s *Server) lookupAddrs(key string) ([]netip.Addr, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if list, ok := s.addrs[key]; ok {
		return list, len(list) > 0
	}
	return s.defaults, true
}

// lookupTXT returns the TXT values of the canonical name key: those set in
// memory followed by those read from the TXT directory.
func (s *Server) lookupTXT(key string) []string {
	s.mu.Lock()
	values := slices.Clone(s.txt[key])
	dir := s.txtDir
	s.mu.Unlock()
	if dir != "" {
		values = append(values, readTXTFile(dir, key)...)
	}
	return values
}

// readTXTFile reads the values stored for key in dir. Missing or unreadable
// files and names that are not safe file names yield no values.
func readTXTFile(dir, key string) []string {
	if !safeFileName(key) {
		return nil
	}
	f, err := os.Open(filepath.Join(dir, key))
	if err != nil {
		return nil
	}
	defer f.Close()
	var values []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line != "" {
			values = append(values, line)
		}
	}
	return values
}

// safeFileName reports whether key can be used as a file name inside the
// TXT directory without escaping it.
func safeFileName(key string) bool {
	if key == "" || strings.HasPrefix(key, ".") || strings.Contains(key, "..") {
		return false
	}
	return !strings.ContainsAny(key, "/\\\x00")
}
