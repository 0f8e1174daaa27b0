// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// PrintBanner tells a new user where everything is and how to use it:
// the directory, the CRL URL new certificates name, the root to trust,
// the admin listener and a certbot command line. version is weir's.
// With log.format json it is one JSON log record with the same facts.
func (s *Server) PrintBanner(w io.Writer, version string) {
	dir := s.baseURL + "/directory"
	rootPath := dataPath(s.cfg.DataDir, fileRootPEM)
	if s.cfg.Log.Format == "json" {
		s.logBanner(w, version, dir, rootPath)
		return
	}
	fmt.Fprintf(w, "weir %s is serving ACME\n\n", version)
	fmt.Fprintf(w, "  directory:    %s\n", dir)
	if crl := s.svc.CA().Config().CRLURL; crl != "" {
		fmt.Fprintf(w, "  CRL:          %s\n", crl)
	}
	if s.root != nil {
		fmt.Fprintf(w, "  root CA:      %s\n", rootPath)
		fmt.Fprintf(w, "  SHA-256:      %s\n", s.rootFP)
	}
	fmt.Fprintf(w, "  data dir:     %s\n", s.cfg.DataDir)
	if s.admin != nil {
		fmt.Fprintf(w, "  admin:        %s/ (dashboard, API, /metrics)\n", AdminURL(s.cfg))
		if adminTokenWanted(s.cfg) {
			fmt.Fprintf(w, "  admin token:  %s\n", adminTokenPath(s.cfg))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Get a certificate with certbot (standalone http-01 listens on port %d, so run it as root):\n\n", s.cfg.Challenges.HTTP01.Port)
	fmt.Fprintf(w, "  %s\n\n", certbotCommand(rootPath, dir, s.cfg.Challenges.HTTP01.Port))
}

// certbotCommand is a certbot command line that works as printed.
func certbotCommand(rootPath, dir string, httpPort int) string {
	cmd := fmt.Sprintf("REQUESTS_CA_BUNDLE=%s certbot certonly --server %s --standalone -d localhost --agree-tos --register-unsafely-without-email --non-interactive", rootPath, dir)
	if httpPort != 80 {
		cmd += fmt.Sprintf(" --http-01-port %d", httpPort)
	}
	return cmd
}

// logBanner is the banner as one JSON record, written whatever log.level
// says, as the text banner is.
func (s *Server) logBanner(w io.Writer, version, dir, rootPath string) {
	attrs := []slog.Attr{slog.String("version", version), slog.String("directory", dir)}
	if crl := s.svc.CA().Config().CRLURL; crl != "" {
		attrs = append(attrs, slog.String("crl", crl))
	}
	if s.root != nil {
		attrs = append(attrs, slog.String("root_ca", rootPath), slog.String("root_sha256", s.rootFP))
	}
	attrs = append(attrs, slog.String("data_dir", s.cfg.DataDir))
	if s.admin != nil {
		attrs = append(attrs, slog.String("admin", AdminURL(s.cfg)+"/"))
		if adminTokenWanted(s.cfg) {
			attrs = append(attrs, slog.String("admin_token", adminTokenPath(s.cfg)))
		}
	}
	attrs = append(attrs, slog.String("certbot", certbotCommand(rootPath, dir, s.cfg.Challenges.HTTP01.Port)))
	log, _ := newLogger(LogConfig{Format: "json", Level: "info"}, w)
	log.LogAttrs(context.Background(), slog.LevelInfo, "weir is serving ACME", attrs...)
}
