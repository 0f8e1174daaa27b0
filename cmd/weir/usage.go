// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
)

// usage is weir's top-level help: every command, verb and flag.
// TestTopLevelHelpListsEverything checks it against each command's own -h.
func usage(w io.Writer) {
	fmt.Fprint(w, `weir: an ACME certificate authority for internal PKI

Usage: weir COMMAND [FLAGS] [ARGUMENTS]

Setting up and running:
  weir init [-config FILE] [-data-dir DIR] [-force] [-print-config] [-keep-config]
         [-root-key-out FILE]
                              write a commented config file (default weir.yaml)
                              and create the data directory: CA, HTTPS
                              certificate, admin token (the root's key at
                              FILE, outside it, with -root-key-out)
  weir serve [-config FILE] [-pprof HOST:PORT]
                              run the server; with no config, embedded defaults
  weir check-config FILE      check a config file; every problem names its key
  weir migrate [-config FILE] apply the ACME store's schema migrations (SQLite
                              or PostgreSQL) and print its versions; serve
                              does it at start too
  weir migrate-storage [-config FILE] --from sqlite --to postgres
         [--to-dsn DSN | --to-dsn-file FILE] [-force] [-batch N]
                              copy a stopped weir's ACME state (accounts,
                              orders, certificates, revocations) from its
                              SQLite file to PostgreSQL, keeping every ID

The CA's ceremonies (on files and tokens, the root kept offline):
  weir ca take-root-offline [-config FILE] -to FILE
                              move the data directory's root key to FILE
  weir ca new-intermediate-key -name CN [-org O] -key-out FILE -csr-out FILE
         [-passphrase-file F]
                              a new intermediate's key (encrypted with the
                              passphrase) and its CSR
  weir ca sign-intermediate -root-cert FILE -csr FILE -out FILE
         -root-key FILE [-root-key-type file|encrypted-file|pkcs11]
         [-passphrase-file F | -passphrase-env VAR]
         [-pkcs11-module PATH (-pkcs11-token LABEL | -pkcs11-slot N)
          (-pkcs11-key-label L | -pkcs11-key-id HEX) (-pin-file F | -pin-env VAR)]
         [-crl-url URL | -config FILE]
                              sign the CSR with the offline root; the
                              intermediate names the root's CRL
  weir ca sign-root-crl -root-cert FILE -out FILE -root-key FILE [...]
         [-revoke FILE... -reason R] [-next-update D]
                              sign the root's next CRL (its state: -out),
                              revoking intermediates; ca.root-crl-file
  weir ca import [-config FILE] -cert FILE [-key FILE]
                              make it the data directory's intermediate from
                              weir serve's next start
  weir ca add-issuer [-config FILE] -id ID -cert FILE [-key FILE]
                              add it as the issuer ID (ca.issuers), for a
                              rotation (ca.active-issuer)

The audit trail (its files, not the running weir):
  weir audit verify [-config FILE] [AUDIT-FILE...]
                              check the hash chain; names the first line
                              where it breaks

The verifiable log (its tiles and proofs; prove asks the running weir):
  weir log verify -key VKEY|@FILE (-url URL | -dir DIR) [-checkpoint FILE]...
                              audit the whole log, served or mirrored: every
                              entry, hash tile and root, and the checkpoints
                              you kept are of the same tree
  weir log prove SERIAL [-o FILE]
                              a certificate's inclusion proof, as JSON (takes
                              the admin flags below)
  weir log check-proof -key VKEY|@FILE [-cert FILE] PROOF.json
                              check a proof offline, and with -cert that it
                              is that certificate's issuance
  weir log monitor -url URL -key VKEY|@FILE -state FILE [-checkpoint FILE]
         [-interval D] [-stale D] [-once] [-metrics-listen ADDR]
         [-keep-serving] [-witness-key VKEY|@FILE]... [-witnesses N]
         [-clear-alarm]
                              follow the log: each new checkpoint must extend
                              the last one verified and every new entry match
                              and parse; exit 3 on an alarm (fork, rewind,
                              bad-signature, bad-tile, entry-mismatch,
                              unparseable-entry, stale)
  weir log witness -key FILE -name NAME -log VKEY|@FILE... -state FILE
         -listen ADDR [-init]
                              cosign logs' checkpoints over HTTP, refusing
                              forks; -init makes its state, once
  weir log witness-keygen -name NAME -o FILE
                              a witness's key; prints its verifier key

Operating:
  weir healthcheck [-config FILE] [-url URL] [-timeout D]
                              exit 0 when the running weir's /readyz is 200
  weir backup [-config FILE] -out DIR
                              copy the data directory (CA, token, database
                              snapshots) while weir runs

Through the running weir's admin API:
  weir ratelimit status KEY | --account ID | --ip IP
  weir ratelimit explain --account ID --names a,b
  weir ratelimit reset KEY    see and reset the limiter's buckets
  weir accounts list [-q TEXT] [-status S] [-limit N] [-cursor C]
  weir accounts show ID | deactivate ID
  weir certs list [-q TEXT] [-account ID] [-state S] [-limit N] [-cursor C]
  weir certs show SERIAL [--pem]
  weir certs revoke SERIAL | --all-from-account ID [--reason R]
                              revoke one certificate, or every active one of
                              an account (its ARI clients renew at once)
  weir certs renew-now SERIAL... | --account ID | --all
                              move ARI renewal windows into the past: those
                              clients renew at their next poll; nothing is
                              revoked
  weir crl [-regenerate] [-out FILE]
                              the current CRL; -regenerate signs a new one
  weir ca migration-status    each issuer's live certificates, renewed,
                              overdue, renewal rate and projected empty
                              time: how a rotation goes
  weir eab create --label L [--tenant T] | list [--label L] | revoke KEY-ID
                              External Account Binding keys: create prints
                              the key ID, the HMAC key (once) and the
                              certbot and lego flags
  weir tenant create NAME [--allow P,..] [--deny P,..] [--wildcards]
              [--ip-ranges R,..] [--profiles P,..] [--challenges T,..]
              [--max-lifetime D] [--delegated-zone Z,..]
              | update NAME [the same flags]
              | list | show NAME | report NAME | delete NAME
                              tenants: the policy of the accounts bound with
                              their EAB keys, within ca.policy; a pattern P
                              is a name (host.example.com) or a zone with
                              its leading dot (.example.com); names under a
                              delegated zone need no challenge; report adds
                              its keys, accounts and their buckets,
                              refusals by rule and certificates
  weir admin token add NAME --role read|operate | list | revoke NAME
                              admin credentials: a named bearer token with a
                              role (read changes nothing), its name the
                              actor in the log and audit trail; add prints
                              the token once; revoke ends its sessions
  Every one of these takes:
    -config FILE              the server's config: its admin.listen and
                              admin.token-file; when it is missing or
                              invalid, the admin address the running weir
                              last wrote to its data directory
    -admin URL                the admin API's base URL instead
    -token-file FILE          the admin token's file instead (or set
                              WEIR_ADMIN_TOKEN)
    --json                    print JSON for scripts instead of a table

  weir version [-json]        print the version, commit, date, Go version and
                              whether PKCS#11 is built in (also --version)
  weir help [COMMAND [VERB]]  this help, or a command's (as COMMAND -h)

Every command prints its help with -h and exits 0; a usage error exits 2, any
other failure 1.
`)
}
