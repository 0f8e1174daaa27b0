// SPDX-License-Identifier: Apache-2.0

// Command dnsserver runs the dnstest DNS server as a standalone process for
// interoperability tests.
//
// It answers A and AAAA queries for every name with the addresses given by
// -a, and TXT queries from the files in -txt-dir (one file per lower-case
// name without trailing dot, one value per line). It serves UDP and TCP on the
// -listen address and runs until it receives SIGINT or SIGTERM.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/weir-pki/weir/internal/dnstest"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:5053", "UDP and TCP address to listen on")
	txtDir := flag.String("txt-dir", "", "directory of TXT record files (file name = lower-case FQDN without trailing dot, one value per line)")
	addrList := flag.String("a", "127.0.0.1", "comma-separated addresses served for every name (IPv4 as A, IPv6 as AAAA)")
	flag.Parse()

	if err := run(*listen, *txtDir, *addrList); err != nil {
		log.Fatalf("dnsserver: %v", err)
	}
}

// run starts the server and blocks until SIGINT or SIGTERM.
func run(listen, txtDir, addrList string) error {
	addrs, err := parseAddrs(addrList)
	if err != nil {
		return err
	}
	srv, err := dnstest.Start(listen)
	if err != nil {
		return err
	}
	srv.SetDefaultAddrs(addrs...)
	if txtDir != "" {
		srv.SetTXTDir(txtDir)
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("dnsserver listening on %s\n", srv.Addr())
	sig := <-sigs
	log.Printf("dnsserver: received %v, shutting down", sig)
	return srv.Close()
}

// parseAddrs parses a comma-separated list of IP addresses.
func parseAddrs(list string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	for _, field := range strings.Split(list, ",") {
		field = strings.TrimSpace(field)
		if field == "" {
			continue
		}
		ip, err := netip.ParseAddr(field)
		if err != nil {
			return nil, fmt.Errorf("bad -a address %q: %w", field, err)
		}
		addrs = append(addrs, ip)
	}
	return addrs, nil
}
