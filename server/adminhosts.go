// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/weir-pki/weir/web/admin"
)

// adminHosts are the host names the admin listener answers for (a request
// naming another one in Host gets 421, which keeps DNS rebinding out):
//
//   - the host of admin.listen, unless it binds every interface;
//   - on loopback or every interface: localhost, 127.0.0.1, ::1 and the
//     machine's host name, the names a local client uses;
//   - with admin.tls: the names of the listener's certificate, which is
//     how a client that verifies it must name it (a wildcard is left out:
//     list the names it stands for in admin.hosts);
//   - admin.hosts.
//
// web/admin adds the address each connection arrived at. A derived name
// that is not a host name (a certificate may hold anything) is left out.
func adminHosts(a AdminConfig, cert *x509.Certificate) []string {
	var hosts []string
	host, _, _ := net.SplitHostPort(a.Listen)
	ip := net.ParseIP(host)
	unspecified := host == "" || ip != nil && ip.IsUnspecified()
	if !unspecified {
		hosts = append(hosts, host)
	}
	if unspecified || isLoopbackHost(host) {
		dns, ips := serverNames("", "")
		hosts = append(hosts, dns...)
		for _, ip := range ips {
			hosts = append(hosts, ip.String())
		}
	}
	if a.TLS && cert != nil {
		for _, n := range cert.DNSNames {
			if !strings.HasPrefix(n, "*.") {
				hosts = append(hosts, n)
			}
		}
		for _, ip := range cert.IPAddresses {
			hosts = append(hosts, ip.String())
		}
	}
	hosts = slices.DeleteFunc(hosts, func(h string) bool {
		_, err := admin.CanonicalHost(h)
		return err != nil
	})
	return append(hosts, a.Hosts...)
}

// validateAdminHosts checks admin.hosts: each a DNS name or an IP address,
// without scheme or port.
func validateAdminHosts(hosts []string) []error {
	var errs []error
	for i, h := range hosts {
		if _, err := admin.CanonicalHost(h); err != nil {
			errs = append(errs, fmt.Errorf("admin.hosts[%d]: %w", i, err))
		}
	}
	return errs
}
