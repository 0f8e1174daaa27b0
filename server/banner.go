package server

import (
	"fmt"
	"io"
)

// PrintBanner tells a new user where everything is and how to use it:
// the directory, the root to trust, the admin listener and a certbot
// command line. version is weir's.
func (s *Server) PrintBanner(w io.Writer, version string) {
	dir := s.baseURL + "/directory"
	rootPath := dataPath(s.cfg.DataDir, fileRootPEM)
	fmt.Fprintf(w, "weir %s is serving ACME\n\n", version)
	fmt.Fprintf(w, "  directory:    %s\n", dir)
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
