// SPDX-License-Identifier: Apache-2.0

package server

// configTemplate is the commented configuration file: the one source of
// config.example.yaml (weir init -print-config -config
// config.example.yaml; a test keeps the two equal) and of the file weir
// init writes. Every key is shown with its default. A placeholder
// {{key.path}} is the default of that key, rendered from DefaultConfig
// (defaultValue): the rate-limiting block's values all are, so that
// ratelimit.DefaultConfig stays their one copy. A default written out here
// instead is changed in DefaultConfig and here together: TestExampleConfig
// loads the example and compares it with DefaultConfig.
const configTemplate = `# weir configuration. Every key is shown with its default; a key you leave
# out keeps its default, and an unknown key is an error. Run
#   weir serve -config {{config-file}}
# Durations use Go syntax: 90s, 15m, 2160h.
#
# Check an edit with "weir check-config {{config-file}}". A running weir
# applies rate-limiting (but backend and redis), server.trusted-proxies,
# server.connections (max-per-ip, max-total, first-request-timeout),
# ca.policy, ca.default-profile, ca.profiles, ca.root-crl-file,
# challenges.egress and log.level within two seconds of a save, or on
# SIGHUP; an invalid edit is refused and logged, and the running
# configuration stays. Other keys need a restart (docs/operations.md).

# Where weir keeps its CA keys (mode 0600), its database, the admin token
# and the root certificate to distribute (<data-dir>/root.pem). Created by
# weir init or on first start.
data-dir: {{data-dir}}

server:
  # The ACME listener (HTTPS). Needs a restart, as every listen address.
  listen: "localhost:14000"
  # The URL clients use; empty means https://<listen>. Set it when weir is
  # behind a load balancer or reached under another name.
  external-url: ""
  # The plain-HTTP listener of the CA's public, signed artefacts: the CRLs
  # (/ca/crl.der, /crl/ID[/N]), the issuers' certificates
  # (/ca/intermediate.der, /ca/issuer/ID) and the root (/root.pem), GET and
  # HEAD only, 404 for anything else (no ACME, no admin). The certificates
  # weir issues name its http:// URLs as their CRL distribution point and
  # caIssuers (RFC 5280 §4.2.1.13, §4.2.2.1: relying parties fetch them
  # before they trust anything); the ACME listener serves the same paths
  # over HTTPS, for the certificates issued before. Serve it, or a proxy in
  # front of it, on port 80 of a name relying parties reach (docs/
  # operations.md, "CRLs and CA certificates over HTTP"). listen "" turns
  # it off: the certificates then name the ACME listener's https:// URLs.
  # external-url is the http:// base URL the certificates name; empty
  # means http://<host>:<port> with the host of server.external-url (else
  # of listen) and listen's port (none for 80). ca.intermediate.crl-url and
  # issuer-url, when set, win. Needs a restart.
  http:
    listen: "localhost:14080"
    external-url: ""
  # The server's TLS certificate. Empty: weir issues its own from its CA
  # for localhost, 127.0.0.1, ::1, the host name and the listen host, and
  # renews it at start when a third of its life is left.
  tls: { cert-file: "", key-file: "" }
  # The largest JWS body accepted (bytes); larger ones get 413.
  max-body-bytes: 65536
  # Reverse proxies (IPs or CIDRs) whose X-Forwarded-For / Forwarded header
  # is believed. The client IP is the rightmost address that is not a
  # trusted proxy. Empty: the TCP peer is the client.
  trusted-proxies: []
  # Bounds on the ACME listener's connections, and on the plain-HTTP
  # listener's with caps of its own (docs/operations.md). A
  # connection beyond max-per-ip open ones from its address (an IPv6 /64)
  # or beyond max-total in all is closed at accept; 0 turns a cap off. The
  # address is the TCP peer: a whitelisted one (rate-limiting.whitelist) or
  # a trusted proxy is exempt from max-per-ip. A connection that has sent
  # no request within first-request-timeout (HTTP/1.1 or HTTP/2) is
  # closed, and a keep-alive one after idle-timeout without a request.
  # max-per-ip, max-total and first-request-timeout reload live.
  connections:
    max-per-ip: 256
    max-total: 4096
    first-request-timeout: 10s
    idle-timeout: 60s
    # The largest request header (HTTP/1.1, and HTTP/2's header list).
    max-header-bytes: 16384
    # Requests at once on one HTTP/2 connection.
    http2-max-concurrent-streams: 100

acme:
  # The directory "meta" object (RFC 8555 §7.1.1). When terms-of-service
  # is set, new accounts must agree to it.
  website: ""
  terms-of-service: ""
  caa-identities: []
  # How long a new order may wait to be finalized.
  order-lifetime: 168h
  # How long a new authorization stays pending.
  pending-authz-lifetime: 168h
  # How long a validated authorization is reused by the same account.
  valid-authz-lifetime: 720h
  # The most identifiers one order may have. The SAN budget and
  # pending-authorizations max must be at least this large.
  max-identifiers: 30
  # Concurrent challenge validations.
  validation-workers: 16
  # The most of them one account's validations may hold at once; its
  # others wait, and the accounts take turns, so an account whose
  # responders hang (each validation up to challenges.timeout) leaves the
  # other workers to everyone else. 0: a quarter of validation-workers, at
  # least 1. At most validation-workers.
  validation-workers-per-account: 0
  # How long a Replay-Nonce stays redeemable.
  nonce-lifetime: 1h
  # Where Replay-Nonces live. Several replicas must share them, or a nonce
  # from one is refused (badNonce) by the others. memory: in this process
  # (one replica; a restart forgets them); redis: on the Redis of
  # rate-limiting.redis; postgres: in the PostgreSQL store. auto: postgres
  # when storage.driver is postgres, else redis when rate-limiting.backend
  # is redis, else memory. With a shared store down, signed requests get
  # badNonce and new-nonce a 503, both with Retry-After, until it is back:
  # nonces on Redis stop every signed request while Redis is down (whatever
  # on-backend-error says), which nonces on postgres avoid.
  nonces: { backend: auto }
  # Page size of an account's orders list (Link rel="next" for more).
  orders-per-page: 100
  # ACME Renewal Information (RFC 9773): the window each certificate is
  # told to renew in. weir places every new certificate's window within
  # [window-start, window-end] of its lifetime so that the expected renewals
  # stay under max-renewals-per-hour for the whole CA and within each
  # account's san-budget, filling each to half before spreading further.
  # 0 for max-renewals-per-hour turns planning off: every window then starts
  # at two thirds of the lifetime. window-width 0s means lifetime/45.
  # explanation-url is sent with windows in the past (incident mode).
  renewal-info:
    window-start: {{acme.renewal-info.window-start}}
    window-end: {{acme.renewal-info.window-end}}
    window-width: {{acme.renewal-info.window-width}}
    max-renewals-per-hour: {{acme.renewal-info.max-renewals-per-hour}}
    explanation-url: ""
  # External Account Binding (RFC 8555 §7.3.4): "weir eab create --label L"
  # makes a key ID and HMAC key for certbot's --eab-kid/--eab-hmac-key or
  # lego's --eab --kid/--hmac; each key binds one new account, once. A
  # binding that is sent is always checked. required: true refuses new
  # accounts without one (externalAccountRequired) and says so in the
  # directory's meta. Rate-limit overrides keyed "eab:LABEL" apply to the
  # accounts bound with that label's keys.
  external-account-binding: { required: false }

ca:
  # Used in the subject names of a generated root and intermediate.
  name: weir
  # An existing intermediate to issue with instead of generating a root and
  # intermediate. cert-file may hold the chain up to the root; otherwise
  # root-file names the root to distribute. The key file must be mode 0600.
  # Empty: the data directory's (ca/intermediate.pem and its key).
  intermediate:
    cert-file: ""
    key-file: ""
    # Where the intermediate's key is held; weir signs through it alone.
    #   type  file (plaintext PKCS#8), encrypted-file (encrypted PKCS#8,
    #         as openssl pkcs8 -topk8 -v2 aes-256-cbc writes it) or pkcs11
    #         (a key pair in a PKCS#11 token; only in builds with
    #         -tags pkcs11, see README). A key that cannot be opened (a
    #         wrong passphrase or PIN, a missing module) stops the start
    #         with an error naming it; a token that fails while serving
    #         answers finalize with 503 and a Retry-After, the order stays
    #         processing and is issued once the token is back.
    #   passphrase  encrypted-file: exactly one of file (its first line),
    #         env (a variable's name) or credential (a systemd credential's
    #         name, read from $CREDENTIALS_DIRECTORY).
    #   pkcs11  module (the library's path), token-label or slot, key-label
    #         or key-id (hex), and pin (file, env or credential, as above).
    signer:
      type: file
      passphrase: { file: "", env: "", credential: "" }
      pkcs11:
        module: ""
        token-label: ""
        slot: null
        key-label: ""
        key-id: ""
        pin: { file: "", env: "", credential: "" }
    # The CRL distribution point and AIA caIssuers URLs put in the
    # certificates it signs. Empty: weir's own on the plain-HTTP listener,
    # server.http.external-url + /ca/crl.der and /ca/intermediate.der.
    crl-url: ""
    issuer-url: ""
    # Tell the holders of its unexpired certificates, through ARI, to
    # renew now (a window in the past, as in an incident; their renewals
    # are exempt from account limits): after a rotation retired it.
    # Reloads live.
    renew-early: false
  # More intermediates (issuers), for a rotation: each an id (lowercase
  # letters, digits, hyphens; ca.intermediate is "default") and the keys
  # of ca.intermediate above. Empty cert-file: the data directory's
  # ca/issuers/ID/intermediate.pem and its key, as weir ca add-issuer
  # writes them. Each issuer signs the CRL of its own certificates, served
  # at server.http.external-url + /crl/ID (and its certificate at
  # /ca/issuer/ID) unless crl-url (issuer-url) says otherwise, for as long
  # as it is listed: keep a retired one until its last certificate has
  # expired.
  # Changing the issuers needs a restart (docs/operations.md, "Rotating
  # the intermediate").
  issuers: []
  # The issuer of new certificates: "default" (ca.intermediate) or the id
  # of one of ca.issuers. Needs a restart.
  active-issuer: {{ca.active-issuer}}
  # Split each issuer's CRL into this many CRLs (RFC 5280 partitioned CRLs,
  # as Let's Encrypt shards its CRLs), for very large revoked sets: each
  # new certificate names one shard's URL (its CRL URL + /N, N from 1, by
  # its serial), each shard's CRL names its URL in its issuing
  # distribution point, and a revocation remakes only its shard's CRL.
  # Certificates issued before keep their CRL URL, and every shard an
  # unexpired certificate names stays served: lowered, weir keeps making
  # the CRLs of the higher shards until their certificates expire (it says
  # which at start). Needs a restart.
  crl-shards: {{ca.crl-shards}}
  root-file: ""
  # The root's CRL: the intermediates it revoked, signed offline with the
  # root's key by weir ca sign-root-crl (a DER file), served as it is at
  # /ca/root-crl.der on both listeners, the CRL distribution point of the
  # intermediates weir makes. Empty: the data directory's ca/root-crl.der,
  # which weir signs with a new root (listing nothing, valid a year). A
  # file the root did not sign, or past its nextUpdate, is refused at start
  # and at reload; weir reads it again when it changes and warns a month
  # before its nextUpdate (docs/operations.md, "Revoking an intermediate").
  # Reloads live.
  root-crl-file: ""
  # The default lifetime of issued certificates: the lifetime of every
  # profile below that leaves certificate-lifetime out (tls-server, the
  # default profile, and tls-client-server), and of all certificates when
  # no profiles are offered. Never beyond the intermediate's expiry.
  certificate-lifetime: 2160h
  # How long before it is signed a certificate starts, so that a client
  # whose clock runs a little slow accepts it at once. Its lifetime stays
  # as set (it ends as much sooner). An order that asks for notBefore or
  # notAfter gets them as asked. 0 does not backdate; at most half the
  # shortest lifetime (of certificate-lifetime and the profiles'), and at
  # most 1h. Reloads live.
  backdate: {{ca.backdate}}
  # Accept Ed25519 certificate keys (RSA >= 2048 and ECDSA P-256/P-384
  # always are).
  allow-ed25519: false
  # How often the CRL is re-signed when nothing is revoked.
  crl-interval: 1h
  # How late a revocation may reach the CRLs: weir checks for revocations
  # (by any replica) ten times per crl-delay (at most every second) and
  # makes new CRLs, in the background, once waiting longer could put the
  # first revocation it saw on them later than crl-delay after it was
  # stored, counting the time the last CRLs took; so a burst of
  # revocations costs about one CRL per crl-delay and a revocation never
  # waits for a signature. 0 makes the CRLs when read after a revocation
  # (the read waits for the signature).
  crl-delay: 5s
  policy:
    # When not empty, only these domains and their subdomains are issued.
    allowed-domains: []
    # Never issued, with their subdomains; wins over allowed-domains.
    denied-domains: []
    # CIDRs (or single addresses) IP identifiers may come from (RFC 8738).
    # Empty: IP identifiers are refused.
    allowed-ip-ranges: []
  # Put the policy into the root and intermediate weir generates (on first
  # start) as X.509 name constraints (RFC 5280): relying parties then refuse
  # any certificate under weir's root for a name outside allowed-domains and
  # allowed-ip-ranges, or under denied-domains, even one made with a stolen
  # CA key. weir's own HTTPS names (localhost, 127.0.0.0/8, ::1 and the
  # hosts of server.listen and server.external-url) are permitted too. Needs
  # allowed-domains or allowed-ip-ranges; has no effect on a configured or
  # already generated CA, and the constraints stay as generated when the
  # policy changes (orders for names they do not permit are refused).
  name-constraints: false
  # Certificate profiles (the ACME profiles extension, as Let's Encrypt
  # serves it). The directory lists them in meta.profiles; a new order may
  # name one ("profile", e.g. lego run --profile shortlived) and one that
  # names none gets default-profile. Each profile sets:
  #   description           shown to clients in meta.profiles
  #   certificate-lifetime  the validity, and the most an order's notBefore/
  #                         notAfter may ask for (left out: ca.certificate-lifetime)
  #   key-usages            serverAuth, clientAuth or both (left out: serverAuth)
  #   identifier-types      dns, ip or both (left out: both); IP addresses
  #                         also need ca.policy.allowed-ip-ranges
  #   common-name           none: no subject CN, the names in the SAN only;
  #                         first-name: CN = the CSR's common name, else the
  #                         first DNS name, when it fits 64 characters
  #                         (left out: none)
  # A profiles block replaces these three. default-profile: "" with
  # profiles: {} offers none (ca.certificate-lifetime, serverAuth, no CN).
  default-profile: tls-server
  profiles:
    tls-server:
      description: "TLS server certificate: serverAuth, DNS names and IP addresses in the SAN only"
      # certificate-lifetime left out: ca.certificate-lifetime
      key-usages: [serverAuth]
      identifier-types: [dns, ip]
      common-name: none
    tls-client-server:
      description: "TLS client and server certificate for mutual TLS: serverAuth and clientAuth, CN = the first DNS name"
      # certificate-lifetime left out: ca.certificate-lifetime
      key-usages: [serverAuth, clientAuth]
      identifier-types: [dns, ip]
      common-name: first-name
    shortlived:
      description: "Short-lived TLS server certificate: 7 days, serverAuth, SAN only"
      certificate-lifetime: 168h
      key-usages: [serverAuth]
      identifier-types: [dns, ip]
      common-name: none

challenges:
  # The ports weir connects to when validating. Change them only for labs
  # and tests: real clients answer on 80 and 443.
  http-01: { enabled: true, port: 80 }
  dns-01: { enabled: true }
  tls-alpn-01: { enabled: true, port: 443 }
  # The draft DNS challenges, for dns names only (wildcards too); off by
  # default. dns-account-01 (draft-ietf-acme-dns-account-label): dns-01 at
  # _<account label>._acme-challenge.<name>, so that several accounts
  # validate one name at once. dns-persist-01 (draft-ietf-acme-dns-persist):
  # one lasting TXT record at _validation-persist.<name> naming one of
  # issuer-domain-names and the account (its URL, or the -02 hashed URI),
  # read again by each order's challenge. issuer-domain-names: lower case, no trailing dot, 1 to 10,
  # each among the directory's caaIdentities when it has any; empty means
  # the host of server.external-url. docs/challenges.md.
  dns-account-01: { enabled: false }
  dns-persist-01: { enabled: false, issuer-domain-names: [] }
  # host:port of the DNS server used for every validation lookup; empty
  # means the system's resolver (which also reads /etc/hosts).
  dns-resolver: ""
  # The time one validation may take.
  timeout: 10s
  # CAA (RFC 8659, with RFC 8657 accounturi and validationmethods): after a
  # challenge passes, weir looks up the CAA records of the name (walking up
  # to its parents, through dns-resolver or /etc/resolv.conf's first
  # nameserver) and refuses the authorization with a caa problem unless an
  # issue (issuewild for *.) property names one of identities. A lookup that
  # fails refuses too. Off by default: internal zones seldom publish CAA.
  # identities: the issuer domain names your CAA records use for weir, e.g.
  # ["weir.internal"]; empty means acme.caa-identities. docs/operations.md.
  caa: { enabled: false, identities: [] }
  # Where validations may connect (http-01 with every redirect, tls-alpn-01),
  # checked on the address of every connection and on every address a
  # lookup returns; applied live on reload. Built in and always denied
  # unless a range below says otherwise: 0.0.0.0/8, link-local
  # (169.254.0.0/16, fe80::/10), the cloud metadata services
  # (fd00:ec2::254, 100.100.100.200, 168.63.129.16, 192.0.0.192), multicast
  # and 240.0.0.0/4 (broadcast), and ::. The admin listener is never
  # connected to. Loopback and private ranges are allowed. The most
  # specific range decides; at equal length denied-cidrs beats
  # allowed-cidrs, which beats the built-in list. default decides addresses
  # no range covers: allow, or deny to allow only allowed-cidrs.
  # docs/security.md.
  egress: { default: allow, allowed-cidrs: [], denied-cidrs: [] }

storage:
  # Where the ACME objects live. sqlite: the embedded default, one
  # replica. postgres: shared by several replicas; weir creates and
  # migrates its tables at start (weir migrate does it beforehand) in the
  # first schema of the DSN's search_path. weir backup copies SQLite only:
  # back up PostgreSQL with pg_dump.
  driver: sqlite
  # For sqlite: the database file, relative to data-dir.
  path: weir.db
  # For postgres, exactly one of: dsn, a libpq connection string, e.g.
  #   "postgres://weir@db.internal:5432/weir?sslmode=verify-full&search_path=weir"
  # or dsn-file, a file holding it (as given, not relative to data-dir),
  # so that its password stays out of this file.
  dsn: ""
  dsn-file: ""
  # For postgres: the most connections of this replica; 0 means the
  # greater of 4 and the number of CPUs.
  max-conns: 0

# The rate limiter (docs/rate-limits.md). A missing block, or a missing
# key, gets the default shown. An explicit 0 is an error: turn a limit off
# with enabled: false.
rate-limiting:
  # Where buckets live: sqlite (<data-dir>/ratelimit.db, one replica),
  # redis (shared by several replicas) or memory (lost on restart).
  backend: {{rate-limiting.backend}}
  # For backend redis. addrs with several entries is a Cluster; with
  # master-name it is Sentinel. The password is read from password-file.
  redis: {{rate-limiting.redis}}
  # What a request gets when the backend fails or cannot decide within
  # backend-timeout (a hard deadline on the whole limiter step): degrade
  # (each replica decides in process at these limits, so N replicas admit
  # at most N times a limit; counted in
  # weir_ratelimit_degraded_decisions_total, logged, shown on the
  # dashboard), deny (503 with Retry-After, never exceeded) or allow
  # (UNLIMITED while the backend fails; logged and counted).
  on-backend-error: {{rate-limiting.on-backend-error}}
  backend-timeout: {{rate-limiting.backend-timeout}}
  # Under degrade, /readyz answers 503 once the limiter has been degraded
  # this long, and ready again when the backend answers.
  degraded-ready-after: {{rate-limiting.degraded-ready-after}}
  # Linked from every 429 as Link rel="help".
  help-url: {{rate-limiting.help-url}}
  # IPs/CIDRs that bypass the IP-keyed limits (global, account-creation)
  # only. Empty: nobody does.
  whitelist: {{rate-limiting.whitelist}}
  # Per client IP (IPv6 by /64), every ACME endpoint, checked in-process on
  # each replica before any JWS work.
  global: {{rate-limiting.global}}
  # New accounts per client IP.
  account-creation: {{rate-limiting.account-creation}}
  # Per account: one token per order, and one SAN-budget token per name.
  order-creation: {{rate-limiting.order-creation}}
  # Non-revoked certificates per (account, exact name set) in a rolling
  # window; counted exactly.
  duplicate-certificate: {{rate-limiting.duplicate-certificate}}
  # Failed validations per (account, hostname); *.x counts apart from x.
  failed-validation: {{rate-limiting.failed-validation}}
  # Unexpired pending authorizations per account; counted exactly.
  pending-authorizations: {{rate-limiting.pending-authorizations}}
  # Certificates per registered domain (eTLD+1), across accounts.
  registered-domain: {{rate-limiting.registered-domain}}
  # Per-key exceptions, e.g.
  #   - { limit: order-creation, key: "account:42", orders-per-account-per-hour: 500, order-burst: 50 }
  #   - { limit: account-creation, key: "ip:10.1.2.3", per-ip-per-hour: 100 }
  #   - { limit: order-creation, key: "eab:team-x", order-burst: 50 }   # accounts of EAB label team-x
  #   - { limit: pending-authorizations, key: "tenant:team-a", max: 500 }   # accounts of tenant team-a
  # The most specific override of a limit wins: account:ID, then eab:LABEL,
  # then tenant:NAME, then the value above.
  overrides: {{rate-limiting.overrides}}

# The administrators' listener: admin API, dashboard, /metrics, /healthz and
# /readyz. Every path but /healthz and /readyz needs the bearer token (or a
# dashboard session), and in every auth mode a browser's state-changing
# request from another origin is refused (403).
admin:
  enabled: true
  # Loopback by default. Another address also needs auth: token and tls: true.
  listen: "127.0.0.1:14001"
  # The bearer token, relative to data-dir; generated (mode 0600) at first start.
  token-file: admin-token
  # token | none (none is only allowed on loopback)
  auth: token
  # Serve the admin listener over HTTPS with the server's certificate.
  tls: false
  # More host names (DNS names or IP addresses, no port) the admin listener
  # answers for; a request naming any other in Host gets 421. It always
  # answers for the host of listen and the address a connection arrived at;
  # on loopback or every interface also for localhost, 127.0.0.1, ::1 and the
  # machine's name; with tls: true for the names of its certificate.
  hosts: []

log:
  # debug | info | warn | error
  level: info
  # text | json
  format: text

# The audit trail: one hash-chained event per issuance, revocation, admin
# action and configuration reload (docs/operations.md, "Audit trail").
# Check a file with "weir audit verify FILE...". Changes need a restart.
audit:
  # file (JSON lines, fsynced, rotated by size) | log (one log record per
  # event)
  sink: {{audit.sink}}
  # When sink: file fsyncs an event. background: the line is written before
  # the request goes on (a killed weir loses no event) and fsynced right
  # after, so that a power loss may lose the events of the last
  # milliseconds; event: fsynced before the request goes on, at about 17 %
  # more CPU per certificate (docs/performance.md).
  sync: {{audit.sync}}
  # The file, relative to data-dir. {replica} is replica-id, so replicas
  # sharing a directory each write their own file and chain.
  path: {{audit.path}}
  # Bytes past which the file is renamed aside with the time in its name
  # and a new one continues the chain; 0 never rotates.
  max-size: {{audit.max-size}}
  # Names this replica in the events and the file; empty: the host name.
  replica-id: ""

# The verifiable log (docs/security.md, "The verifiable log"): every
# issuance and revocation, written in its own transaction, and every admin
# action and reload, in a Merkle tree whose signed checkpoints and tiles
# are served under /log/ (C2SP tlog-tiles). Check it from elsewhere with
# "weir log verify" and "weir log monitor". Changes need a restart.
transparency:
  enabled: {{transparency.enabled}}
  # Names the log in its checkpoints. Empty: the log's own, or for a new
  # log the host of server.external-url followed by /log.
  origin: ""
  # The log's Ed25519 key, relative to data-dir; generated at first start
  # while the log is empty. Never a CA key. Its verifier key, for
  # monitors, is written to transparency/log-key.vkey.
  key-file: {{transparency.key-file}}
  # How the key is held, as ca.intermediate.signer (file, encrypted-file,
  # pkcs11 with an Ed25519 key).
  signer:
    type: file
  # How often the waiting entries are integrated and a checkpoint signed.
  interval: {{transparency.interval}}
  # How long an entry may wait before /readyz warns that the log is behind.
  max-lag: {{transparency.max-lag}}
  # Witnesses asked to cosign each checkpoint (C2SP tlog-witness): each a
  # url (weir POSTs url/add-checkpoint) and key, its cosignature/v1 key
  # as "weir log witness-keygen" prints it.
  witnesses: []
  # How many must cosign a checkpoint before it is served; 0: at once.
  witnesses-required: {{transparency.witnesses-required}}
  # How often an unchanged checkpoint is cosigned again (fresh times).
  witness-interval: {{transparency.witness-interval}}
`
