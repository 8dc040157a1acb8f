#!/bin/sh
# SPDX-License-Identifier: MIT
# test_remote_client_tls.sh - the remote client (docs/REMOTE.md "Client settings") against a
# perflib-exporter with real TLS, a client CA and basic auth (--web.config.file): openssl
# makes a CA, the server's certificate (IP 127.0.0.2), a client certificate from the CA and
# one from another CA. The consumer API, PDH and typeperf read the server with the right
# settings (environment, or the settings file's [host] section); a missing client
# certificate, one from the other CA, a wrong password, a password file others may read,
# and a server certificate the client does not trust give ERROR_ACCESS_DENIED /
# PDH_ACCESS_DENIED; plain HTTP to the TLS port and a port nobody serves give
# ERROR_BAD_NETPATH. Exit 0 pass, 77 skip, 1 fail.
here=$(cd "$(dirname "$0")/../.." && pwd)
data="$here/tests/data/exporter"
. "$data/lib.sh"

exp_preflight
trap exp_cleanup EXIT
trap 'exit 1' INT TERM HUP
command -v python3 >/dev/null || exp_skip "python3 is not installed"
command -v openssl >/dev/null || exp_fail "openssl is needed (make deps)"
command -v mkpasswd >/dev/null || exp_fail "mkpasswd is needed (package whois, make deps)"
pki="$EXP_TMP/pki"
mkdir -p "$pki"
mk_ca ca
mk_ca otherca
mk_cert server ca "IP:127.0.0.2"
mk_cert client ca "DNS:client.example"
mk_cert rogue otherca "DNS:client.example"
chmod 600 "$pki"/*.key
hash=$(mkpasswd -m bcrypt -R 8 's3cret pass') || exp_fail "mkpasswd -m bcrypt failed"
printf 's3cret pass\n' >"$EXP_TMP/pass"
printf 'wrong\n' >"$EXP_TMP/wrong"
chmod 600 "$EXP_TMP/pass" "$EXP_TMP/wrong"

cat >"$EXP_TMP/web.yml" <<EOF2
tls_server_config:
  cert_file: $pki/server.crt
  key_file: $pki/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $pki/ca.crt
basic_auth_users:
  alice: $hash
EOF2
exp_start_provider
: >"$EXP_TMP/exporter.err"
"$TOOLS/perflib-exporter" --listen 127.0.0.2:0 --web.config.file "$EXP_TMP/web.yml" \
	2>"$EXP_TMP/exporter.err" &
EXP_PID=$!
exp_wait 100 grep -q 'listening on https://' "$EXP_TMP/exporter.err" ||
	exp_fail "the TLS exporter did not start: $(cat "$EXP_TMP/exporter.err")"
port=$(sed -n 's/.*listening on https:[^ ]*:\([0-9]*\)\/metrics$/\1/p' "$EXP_TMP/exporter.err")
machine="127.0.0.2:$port"

asan=$(ldd "$OUTPUT/libperflib.so" 2>/dev/null | awk '/libasan/ { print $3 }')
[ -z "$asan" ] || export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
# call: one client process with the environment given (no settings of the test's user)
call() {
	env HOME="$EXP_TMP/home" XDG_CONFIG_HOME= PERFLIB_REMOTE_CONFIG= LD_PRELOAD="$asan" \
		LD_LIBRARY_PATH="$OUTPUT" "$@" python3 "$here/tests/tools/remote_call.py" \
		"$OUTPUT/libperflib.so" "$OUTPUT/libpdh.so" "$machine" 2>"$EXP_TMP/call.err"
}
# expect WANT WHAT ENV...
expect() {
	want=$1 what=$2
	shift 2
	got=$(call "$@")
	[ "$got" = "$want" ] || exp_fail "$what: '$got', expected '$want' ($(cat "$EXP_TMP/call.err"))"
	echo "ok    $what: $got"
}
good="PERFLIB_REMOTE_CA=$pki/ca.crt PERFLIB_REMOTE_CERT=$pki/client.crt PERFLIB_REMOTE_KEY=$pki/client.key"
# PDH_ACCESS_DENIED is c0000bdb, PDH_CSTATUS_NO_MACHINE 800007d0
expect "sets 8 2 data 8 pdh 0 12345678901234" "TLS, client certificate, password" \
	$good PERFLIB_REMOTE_USER=alice PERFLIB_REMOTE_PASSFILE="$EXP_TMP/pass"
expect "sets 5 0 data 5 pdh c0000bdb -1" "wrong password" \
	$good PERFLIB_REMOTE_USER=alice PERFLIB_REMOTE_PASSFILE="$EXP_TMP/wrong"
expect "sets 5 0 data 5 pdh c0000bdb -1" "no user" $good
chmod 644 "$EXP_TMP/pass"
expect "sets 5 0 data 5 pdh c0000bdb -1" "a password file others may read: not used" \
	$good PERFLIB_REMOTE_USER=alice PERFLIB_REMOTE_PASSFILE="$EXP_TMP/pass"
grep -q 'chmod 600' "$EXP_TMP/call.err" || exp_fail "no warning about the password file's mode"
chmod 600 "$EXP_TMP/pass"
expect "sets 5 0 data 5 pdh c0000bdb -1" "no client certificate" \
	PERFLIB_REMOTE_CA="$pki/ca.crt" PERFLIB_REMOTE_USER=alice PERFLIB_REMOTE_PASSFILE="$EXP_TMP/pass"
expect "sets 5 0 data 5 pdh c0000bdb -1" "a client certificate from another CA" \
	PERFLIB_REMOTE_CA="$pki/ca.crt" PERFLIB_REMOTE_CERT="$pki/rogue.crt" \
	PERFLIB_REMOTE_KEY="$pki/rogue.key" PERFLIB_REMOTE_USER=alice \
	PERFLIB_REMOTE_PASSFILE="$EXP_TMP/pass"
expect "sets 5 0 data 5 pdh c0000bdb -1" "a server certificate the client does not trust" \
	PERFLIB_REMOTE_CA="$pki/otherca.crt" PERFLIB_REMOTE_CERT="$pki/client.crt" \
	PERFLIB_REMOTE_KEY="$pki/client.key" PERFLIB_REMOTE_USER=alice \
	PERFLIB_REMOTE_PASSFILE="$EXP_TMP/pass"
expect "sets 53 0 data 53 pdh 800007d0 -1" "plain HTTP to the TLS port: no perflib server there"

# the settings file: [host] section of this machine name
mkdir -p "$EXP_TMP/home/.config/perflib"
cat >"$EXP_TMP/home/.config/perflib/remote.conf" <<EOF2
# perflib remote client settings
timeout = 5
[127.0.0.2]
port = $port
ca = $pki/ca.crt
cert = $pki/client.crt
key = $pki/client.key
user = alice
passfile = $EXP_TMP/pass
EOF2
machine=127.0.0.2
got=$(env HOME="$EXP_TMP/home" XDG_CONFIG_HOME= LD_PRELOAD="$asan" LD_LIBRARY_PATH="$OUTPUT" \
	python3 "$here/tests/tools/remote_call.py" "$OUTPUT/libperflib.so" "$OUTPUT/libpdh.so" \
	127.0.0.2 2>"$EXP_TMP/call.err")
[ "$got" = "sets 8 2 data 8 pdh 0 12345678901234" ] ||
	exp_fail "~/.config/perflib/remote.conf: '$got' ($(cat "$EXP_TMP/call.err"))"
echo "ok    ~/.config/perflib/remote.conf [127.0.0.2]: port, CA, certificate, user, password file"

# typeperf -s over TLS, with the settings file
out=$(HOME="$EXP_TMP/home" XDG_CONFIG_HOME= "$TOOLS/typeperf" -s 127.0.0.2 \
	'\Exporter Single\Connections' -sc 2 -si 1 2>"$EXP_TMP/tp.err")
printf '%s\n' "$out" | grep -q '"12345678901234.000000"' ||
	exp_fail "typeperf -s 127.0.0.2 over TLS: $out $(cat "$EXP_TMP/tp.err")"
printf "%s\n" "$out" | grep -qF '"\\127.0.0.2\Exporter Single\Connections"' ||
	exp_fail "typeperf -s 127.0.0.2: header $(printf '%s\n' "$out" | head -1)"
echo "ok    typeperf -s 127.0.0.2 over TLS with the settings file"
echo "ok: the remote client over TLS with client certificates and passwords"
