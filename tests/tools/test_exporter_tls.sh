#!/bin/sh
# SPDX-License-Identifier: MIT
# test_exporter_tls.sh - perflib-exporter's web configuration file (--web.config.file,
# docs/REMOTE.md) with real TLS: openssl makes a CA, a server certificate, a client
# certificate from that CA and one from another CA; curl reads /metrics and /perflib/v1
# over HTTPS. Checked: each client_auth_type with no certificate, a good one and one from the
# other CA; client_allowed_sans; basic auth (right and wrong password, unknown user, none);
# configured response headers; min/max TLS versions; bad configuration files (missing, not
# YAML, unknown key, bad values, unreadable certificate, not a bcrypt hash) refused at
# start with a message naming the problem; a peer off loopback (a network namespace of the
# test) refused the consumer operations without TLS and served with TLS, or with the opt-out
# flag. Exit 0 pass, 77 skip, 1 fail.
here=$(cd "$(dirname "$0")/../.." && pwd)
data="$here/tests/data/exporter"
. "$data/lib.sh"

exp_preflight
PIDS=""
cleanup() {
	for p in $PIDS; do exp_stop "$p"; done
	exp_cleanup
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
command -v openssl >/dev/null || exp_fail "openssl is needed (make deps)"
command -v mkpasswd >/dev/null || exp_fail "mkpasswd is needed (package whois, make deps)"
pki="$EXP_TMP/pki"
mkdir -p "$pki"

# ---- certificates (mk_ca, mk_cert: lib.sh) ---------------------------------------------
mk_ca ca
mk_ca otherca
mk_cert server ca "IP:127.0.0.1,IP:10.99.0.1,DNS:localhost"
mk_cert client ca "DNS:client.example"
mk_cert rogue otherca "DNS:client.example"
hash=$(mkpasswd -m bcrypt -R 8 's3cret pass') || exp_fail "mkpasswd -m bcrypt failed"
case $hash in '$2b$08$'*) ;; *) exp_fail "mkpasswd gave '$hash', not a bcrypt hash" ;; esac

# ---- helpers ---------------------------------------------------------------------------
# start_tls CONFIG [ARGS]: an exporter with the configuration; sets PID and URL (https)
start_tls() {
	cfg=$1
	shift
	# emptied here, not by the child's redirection: the wait must not read the last run's
	: >"$EXP_TMP/tls.err"
	"$TOOLS/perflib-exporter" --web.listen-address 127.0.0.1:0 --web.config.file "$cfg" "$@" \
		2>"$EXP_TMP/tls.err" &
	PID=$!
	PIDS="$PIDS $PID"
	exp_wait 100 grep -q 'listening on https://' "$EXP_TMP/tls.err" ||
		exp_fail "the exporter did not start with $cfg: $(cat "$EXP_TMP/tls.err")"
	URL=$(sed -n 's/.*listening on \(https:[^ ]*\)$/\1/p' "$EXP_TMP/tls.err")
	BASE=${URL%/metrics}
}
# stop_tls: SIGTERM; a clean exit (a sanitizer build: no leak, no report) is part of the test
stop_tls() {
	exp_stop "$PID"
	PIDS=$(echo "$PIDS" | sed "s/ $PID\$//; s/ $PID / /")
	[ "$EXP_STATUS" = 0 ] || exp_fail "the exporter exited $EXP_STATUS: $(tail -20 "$EXP_TMP/tls.err")"
	! grep -Eq 'Sanitizer|runtime error:' "$EXP_TMP/tls.err" ||
		exp_fail "a sanitizer report: $(grep -E -A20 'Sanitizer|runtime error:' "$EXP_TMP/tls.err")"
}
# code URL [CURL ARGS]: the HTTP code curl gets, 000 when the connection fails
code() {
	u=$1
	shift
	curl -sS -o "$EXP_TMP/body" -D "$EXP_TMP/headers" -w '%{http_code}' --max-time 20 \
		--cacert "$pki/ca.crt" "$@" "$u" 2>"$EXP_TMP/curl.err"
}
# expect WANT WHAT URL [CURL ARGS]
expect() {
	want=$1 what=$2
	shift 2
	got=$(code "$@")
	[ "$got" = "$want" ] ||
		exp_fail "$what: HTTP $got, expected $want ($(cat "$EXP_TMP/curl.err" "$EXP_TMP/body" 2>/dev/null | head -3))"
}
good="--cert $pki/client.crt --key $pki/client.key"
rogue="--cert $pki/rogue.crt --key $pki/rogue.key"

exp_start_provider
# the plain exporter: what the consumer operations answer over loopback HTTP
exp_start_exporter
plain_base=${EXP_URL%/metrics}
curl -sS -o "$EXP_TMP/sets.plain" "$plain_base/perflib/v1/countersets" ||
	exp_fail "plain HTTP countersets failed"
[ -s "$EXP_TMP/sets.plain" ] || exp_fail "plain HTTP countersets: empty (no provider?)"

# ---- TLS without client certificates ----------------------------------------------------
cat >"$EXP_TMP/tls.yml" <<EOF
# a comment, then relative file names: relative to this file's directory
tls_server_config:
  cert_file: pki/server.crt
  key_file: pki/server.key
http_server_config:
  http2: false
  headers:
    X-Frame-Options: deny
    X-Content-Type-Options: nosniff
EOF
start_tls "$EXP_TMP/tls.yml"
grep -q 'warning: TLS without authentication' "$EXP_TMP/tls.err" ||
	exp_fail "no warning for TLS without authentication: $(cat "$EXP_TMP/tls.err")"
expect 200 "TLS /metrics" "$URL"
grep -q '^perflib_' "$EXP_TMP/body" || exp_fail "TLS /metrics: no perflib_ metric"
grep -qi '^X-Frame-Options: deny' "$EXP_TMP/headers" || exp_fail "no X-Frame-Options header"
grep -qi '^X-Content-Type-Options: nosniff' "$EXP_TMP/headers" ||
	exp_fail "no X-Content-Type-Options header"
expect 200 "TLS countersets" "$BASE/perflib/v1/countersets"
cmp -s "$EXP_TMP/body" "$EXP_TMP/sets.plain" ||
	exp_fail "countersets over TLS differ from plain HTTP"
grep -qi '^X-Perflib-Status: 0' "$EXP_TMP/headers" || exp_fail "no X-Perflib-Status: 0"
# plain HTTP to the TLS port, and a client that does not trust the server: no answer
got=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 20 "http://${URL#https://}" 2>/dev/null)
[ "$got" != 200 ] || exp_fail "plain HTTP answered on the TLS port"
got=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 20 --cacert "$pki/otherca.crt" "$URL" 2>/dev/null)
[ "$got" = 000 ] || exp_fail "a client trusting another CA got HTTP $got"
# the server still serves after those
expect 200 "TLS /metrics after bad clients" "$URL"
# TLS 1.3 by default, 1.2 accepted (min_version TLS12)
expect 200 "TLS 1.2 client" "$URL" --tls-max 1.2
stop_tls
echo "ok    TLS: /metrics and the consumer operations over HTTPS, headers, versions"

# min_version TLS13 refuses a TLS 1.2 client
cat >"$EXP_TMP/tls13.yml" <<EOF
tls_server_config:
  cert_file: $pki/server.crt
  key_file: $pki/server.key
  min_version: TLS13
  curve_preferences: [X25519, CurveP256]
EOF
start_tls "$EXP_TMP/tls13.yml"
expect 000 "TLS 1.2 client with min_version TLS13" "$URL" --tls-max 1.2
expect 200 "TLS 1.3 client with min_version TLS13" "$URL" --tlsv1.3
stop_tls
echo "ok    min_version TLS13 refuses TLS 1.2"

# ---- client_auth_type ------------------------------------------------------------------
# auth_case TYPE CA? EXPECT_NONE EXPECT_GOOD EXPECT_ROGUE
auth_case() {
	{
		printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' \
			"$pki/server.crt" "$pki/server.key"
		printf '  client_auth_type: %s\n' "$1"
		[ "$2" = ca ] && printf '  client_ca_file: %s\n' "$pki/ca.crt"
	} >"$EXP_TMP/auth.yml"
	start_tls "$EXP_TMP/auth.yml"
	expect "$3" "$1: no certificate" "$URL"
	expect "$4" "$1: certificate from the CA" "$URL" $good
	expect "$5" "$1: certificate from another CA" "$URL" $rogue
	expect "$4" "$1: consumer operations, certificate from the CA" \
		"$BASE/perflib/v1/countersets" $good
	if [ "$3" = 403 ]; then
		expect 403 "$1: consumer operations, no certificate" "$BASE/perflib/v1/countersets"
		grep -qi '^X-Perflib-Status: 5' "$EXP_TMP/headers" ||
			exp_fail "$1: a refused certificate gives no X-Perflib-Status: 5"
		grep -q "403 a client certificate is required" "$EXP_TMP/tls.err" ||
			exp_fail "$1: no log line for the missing certificate"
	fi
	[ "$5" != 403 ] || grep -q "403 the client certificate is not trusted" "$EXP_TMP/tls.err" ||
		exp_fail "$1: no log line for the untrusted certificate"
	stop_tls
}
auth_case RequestClientCert noca 200 200 200
auth_case RequireAnyClientCert noca 403 200 200
auth_case VerifyClientCertIfGiven ca 200 200 403
auth_case RequireAndVerifyClientCert ca 403 200 403
echo "ok    client_auth_type: the four types with no, a trusted and an untrusted certificate"

# client_allowed_sans: the good certificate's SAN is listed, then not
for sans in client.example other.example; do
	cat >"$EXP_TMP/sans.yml" <<EOF
tls_server_config:
  cert_file: $pki/server.crt
  key_file: $pki/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $pki/ca.crt
  client_allowed_sans:
    - $sans
EOF
	start_tls "$EXP_TMP/sans.yml"
	want=200
	[ "$sans" = client.example ] || want=403
	expect "$want" "client_allowed_sans [$sans]" "$URL" $good
	stop_tls
done
echo "ok    client_allowed_sans: a listed SAN served, another refused"

# ---- basic auth ------------------------------------------------------------------------
cat >"$EXP_TMP/users.yml" <<EOF
tls_server_config:
  cert_file: $pki/server.crt
  key_file: $pki/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $pki/ca.crt
basic_auth_users:
  alice: '$hash'
  bob: '$(mkpasswd -m bcrypt -R 8 'other')'
EOF
start_tls "$EXP_TMP/users.yml"
expect 200 "basic auth: right password" "$URL" $good -u 'alice:s3cret pass'
expect 200 "basic auth: right password again (remembered)" "$URL" $good -u 'alice:s3cret pass'
expect 200 "basic auth: the other user" "$URL" $good -u 'bob:other'
expect 401 "basic auth: wrong password" "$URL" $good -u 'alice:s3cret'
grep -qi '^WWW-Authenticate: Basic' "$EXP_TMP/headers" || exp_fail "401 without WWW-Authenticate"
expect 401 "basic auth: unknown user" "$URL" $good -u 'carol:s3cret pass'
expect 401 "basic auth: another user's password" "$URL" $good -u 'bob:s3cret pass'
expect 401 "basic auth: no credentials" "$URL" $good
expect 401 "basic auth: consumer operations without credentials" \
	"$BASE/perflib/v1/countersets" $good
expect 200 "basic auth: consumer operations" "$BASE/perflib/v1/countersets" $good \
	-u 'alice:s3cret pass'
cmp -s "$EXP_TMP/body" "$EXP_TMP/sets.plain" || exp_fail "countersets with auth differ"
# a certificate refused comes before the password: 403 even with the right one
expect 403 "basic auth with an untrusted certificate" "$URL" $rogue -u 'alice:s3cret pass'
grep -q '401 wrong user or password' "$EXP_TMP/tls.err" || exp_fail "no log line for a 401"
grep -q 's3cret' "$EXP_TMP/tls.err" && exp_fail "a password reached the log"
stop_tls
echo "ok    basic auth: right, wrong, unknown user, none; a password never logged"

# basic auth without TLS: allowed, with a warning, and applies to /metrics
printf 'basic_auth_users:\n  alice: %s\n' "$hash" >"$EXP_TMP/plainauth.yml"
exp_stop "$EXP_PID"
EXP_PID=""
: >"$EXP_TMP/exporter.err"
exp_start_exporter --web.config.file "$EXP_TMP/plainauth.yml"
grep -q 'warning: basic_auth_users without TLS' "$EXP_TMP/exporter.err" ||
	exp_fail "no warning for passwords over plain HTTP"
got=$(curl -sS -o /dev/null -w '%{http_code}' "$EXP_URL")
[ "$got" = 401 ] || exp_fail "plain HTTP /metrics without credentials: $got, expected 401"
got=$(curl -sS -o /dev/null -w '%{http_code}' -u 'alice:s3cret pass' "$EXP_URL")
[ "$got" = 200 ] || exp_fail "plain HTTP /metrics with credentials: $got, expected 200"
echo "ok    basic auth over plain HTTP: /metrics needs it too"

# ---- bad configuration files -----------------------------------------------------------
# bad NAME EXPECTED-TEXT < file: the exporter exits 1 at once, its message has the text
bad() {
	name=$1 want=$2
	cat >"$EXP_TMP/$name.yml"
	timeout 20 "$TOOLS/perflib-exporter" --listen 127.0.0.1:0 \
		--web.config.file "$EXP_TMP/$name.yml" >/dev/null 2>"$EXP_TMP/bad.err"
	rc=$?
	[ "$rc" = 1 ] || exp_fail "config $name: exit $rc, expected 1 ($(cat "$EXP_TMP/bad.err"))"
	grep -qF -- "$want" "$EXP_TMP/bad.err" ||
		exp_fail "config $name: message '$(cat "$EXP_TMP/bad.err")' lacks '$want'"
}
timeout 20 "$TOOLS/perflib-exporter" --listen 127.0.0.1:0 \
	--web.config.file "$EXP_TMP/nonexistent.yml" 2>"$EXP_TMP/bad.err"
[ $? = 1 ] && grep -q 'nonexistent.yml: cannot open: No such file' "$EXP_TMP/bad.err" ||
	exp_fail "missing config file: $(cat "$EXP_TMP/bad.err")"
printf 'tls_server_config:\n  cert_file: [unclosed\n' | bad notyaml 'notyaml.yml:3: not YAML'
printf 'tls_server_config:\n  cert_file: a\n  certfile: b\n' |
	bad unknownkey "unknownkey.yml:3: tls_server_config: unknown key 'certfile'"
printf 'web_server: {}\n' | bad unknowntop "unknowntop.yml:1: unknown key 'web_server'"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s/nokey.pem\n' \
	"$pki/server.crt" "$pki" | bad nokeyfile "key: cannot read $pki/nokey.pem: No such file"
printf 'not a certificate\n' >"$pki/garbage.crt"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$pki/garbage.crt" \
	"$pki/server.key" | bad garbagecert "the certificate and key do not load"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$pki/server.crt" \
	"$pki/client.key" | bad wrongkey "the certificate and key do not load"
printf 'tls_server_config:\n  cert_file: %s\n' "$pki/server.crt" |
	bad halftls "tls_server_config: missing key_file"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  cert: x\n' \
	"$pki/server.crt" "$pki/server.key" | bad twocerts "give cert or cert_file, not both"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_auth_type: Always\n' \
	"$pki/server.crt" "$pki/server.key" | bad badauth "client_auth_type: 'Always' is not"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_auth_type: RequireAndVerifyClientCert\n' \
	"$pki/server.crt" "$pki/server.key" | bad noca "RequireAndVerifyClientCert needs client_ca_file"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_ca_file: %s\n' \
	"$pki/server.crt" "$pki/server.key" "$pki/ca.crt" | bad canoauth "client_auth_type is NoClientCert"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  min_version: TLS14\n' \
	"$pki/server.crt" "$pki/server.key" | bad badversion "min_version: 'TLS14' is not"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  min_version: TLS13\n  max_version: TLS12\n' \
	"$pki/server.crt" "$pki/server.key" | bad versions "min_version TLS13 is above max_version TLS12"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n' \
	"$pki/server.crt" "$pki/server.key" | bad ciphers "takes no Go cipher suite names"
printf 'basic_auth_users:\n  alice: plaintext\n' | bad plainpw "the password of 'alice' is not a bcrypt hash"
printf 'basic_auth_users:\n  alice: %s\n  alice: %s\n' "$hash" "$hash" |
	bad twice "key 'alice' given twice"
printf 'basic_auth_users: [alice]\n' | bad userlist "basic_auth_users: expected a mapping"
printf 'rate_limit:\n  interval: 1s\n  burst: 20\n' | bad ratelimit "rate_limit is not supported"
printf 'http_server_config:\n  headers:\n    X-Frame-Options: always\n' |
	bad badheader "X-Frame-Options: 'always' is not deny or sameorigin"
printf 'http_server_config:\n  headers:\n    Server: me\n' | bad otherheader "'Server' is not one of"
# the options: counts checked, server options refused with --once
"$TOOLS/perflib-exporter" --web.max-connections 0 2>"$EXP_TMP/bad.err"
[ $? = 2 ] && grep -q "expected a number from 1 to" "$EXP_TMP/bad.err" ||
	exp_fail "--web.max-connections 0: $(cat "$EXP_TMP/bad.err")"
"$TOOLS/perflib-exporter" --web.max-connections-per-ip x 2>"$EXP_TMP/bad.err"
[ $? = 2 ] || exp_fail "--web.max-connections-per-ip x accepted"
"$TOOLS/perflib-exporter" --once --web.config.file "$EXP_TMP/tls.yml" >/dev/null 2>"$EXP_TMP/bad.err"
[ $? = 2 ] && grep -q "do not go with --textfile or --once" "$EXP_TMP/bad.err" ||
	exp_fail "--once with --web.config.file: $(cat "$EXP_TMP/bad.err")"
# an empty file is a valid one: plain HTTP, no authentication
: >"$EXP_TMP/empty.yml"
exp_stop "$EXP_PID"
EXP_PID=""
: >"$EXP_TMP/exporter.err"
exp_start_exporter --web.config.file "$EXP_TMP/empty.yml"
got=$(curl -sS -o /dev/null -w '%{http_code}' "$EXP_URL")
[ "$got" = 200 ] || exp_fail "an empty configuration file: /metrics gave $got"
echo "ok    bad configuration files refused at start with the file, line and key"

# ---- a peer off loopback ---------------------------------------------------------------
command -v unshare >/dev/null && command -v ip >/dev/null ||
	exp_fail "unshare (util-linux) and ip (iproute2, make deps) are needed"
# in a network namespace of this test: 10.99.0.1 is an address of lo but not loopback.
# ns_codes ARGS: the codes a peer at 10.99.0.1 gets for the consumer operations and /metrics
ns_codes() {
	unshare -n sh -c '
		ip link set lo up && ip addr add 10.99.0.1/32 dev lo || exit 2
		exe=$1 tmp=$2 ca=$3
		shift 3
		# emptied here, not by the child: the wait must not read the last call'"'"'s line
		: >"$tmp/ns.err"
		"$exe" --listen 0.0.0.0:0 "$@" 2>"$tmp/ns.err" &
		pid=$!
		n=0
		until grep -qs "listening on" "$tmp/ns.err"; do
			n=$((n + 1)); [ $n -lt 100 ] || { kill $pid; exit 3; }; sleep 0.1
		done
		scheme=$(sed -n "s/.*listening on \(https*\):.*/\1/p" "$tmp/ns.err")
		port=$(sed -n "s/.*listening on http[^ ]*:\([0-9]*\)\/metrics$/\1/p" "$tmp/ns.err")
		far=$(curl -sS -o /dev/null -w "%{http_code}" --cacert "$ca" --interface 10.99.0.1 \
			"$scheme://10.99.0.1:$port/perflib/v1/countersets")
		metrics=$(curl -sS -o /dev/null -w "%{http_code}" --cacert "$ca" --interface 10.99.0.1 \
			"$scheme://10.99.0.1:$port/metrics")
		kill $pid
		echo "$far $metrics"
	' sh "$TOOLS/perflib-exporter" "$EXP_TMP" "$pki/ca.crt" "$@"
}
got=$(ns_codes)
[ "$got" = "403 200" ] || exp_fail "off loopback without TLS: '$got', expected '403 200'"
got=$(ns_codes --web.config.file "$EXP_TMP/tls.yml")
[ "$got" = "200 200" ] || exp_fail "off loopback with TLS: '$got', expected '200 200'"
got=$(ns_codes --remote.insecure-allow-any-peer)
[ "$got" = "200 200" ] || exp_fail "off loopback with the opt-out: '$got', expected '200 200'"
grep -q 'WARNING: --remote.insecure-allow-any-peer' "$EXP_TMP/ns.err" ||
	exp_fail "the opt-out gave no warning: $(cat "$EXP_TMP/ns.err")"
echo "ok    a peer off loopback: refused without TLS, served with TLS or the loud opt-out"
echo "ok: TLS, client certificates and basic auth from the web configuration file"
