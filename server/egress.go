// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/weir-pki/weir/acme/challenge"
)

// applyEgress compiles the validation egress policy of cfg, with weir's
// own listeners (ownAddrPorts), and installs it in the validator. It is
// called before validations start (Serve) and on every reload.
func (s *Server) applyEgress(cfg challenge.EgressConfig) error {
	eg, err := s.newEgress(cfg)
	if err != nil {
		return err
	}
	s.validator.SetEgress(eg)
	return nil
}

// newEgress compiles cfg with weir's own listeners.
func (s *Server) newEgress(cfg challenge.EgressConfig) (*challenge.Egress, error) {
	return challenge.NewEgress(cfg, s.ownAddrPorts()...)
}

// ownAddrPorts are the addresses of weir's listeners that validations
// must never reach: the admin listener (as bound, else as configured) and
// Options.OtherListeners (weir serve's -pprof). The ACME listener and the
// plain-HTTP one are not among them: everything they serve to a GET is
// public.
func (s *Server) ownAddrPorts() []netip.AddrPort {
	var out []netip.AddrPort
	addrs := s.ownListeners
	if s.adminLn != nil {
		addrs = append(addrs[:len(addrs):len(addrs)], s.adminLn.Addr())
	} else if s.admin != nil {
		out = append(out, listenAddrPorts(s.cfg.Admin.Listen)...)
	}
	for _, a := range addrs {
		if ta, ok := a.(*net.TCPAddr); ok {
			out = append(out, ta.AddrPort())
		}
	}
	return out
}

// listenAddrPorts returns the addresses a listener configured as listen
// ("host:port") binds: a host name is looked up (bounded to 2 s), and an
// empty host, or a name that cannot be looked up, is every address of
// this host (0.0.0.0 and ::), which protects the port everywhere.
func listenAddrPorts(listen string) []netip.AddrPort {
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return nil
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return nil
	}
	port := uint16(n)
	everywhere := []netip.AddrPort{netip.AddrPortFrom(netip.IPv4Unspecified(), port), netip.AddrPortFrom(netip.IPv6Unspecified(), port)}
	if host == "" {
		return everywhere
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.AddrPort{netip.AddrPortFrom(a.Unmap(), port)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return everywhere
	}
	out := make([]netip.AddrPort, len(ips))
	for i, a := range ips {
		out[i] = netip.AddrPortFrom(a.Unmap(), port)
	}
	return out
}
