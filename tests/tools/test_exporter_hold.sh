#!/bin/sh
# SPDX-License-Identifier: MIT
# test_exporter_hold.sh - perflib-exporter holds against a hostile client (issue 30, item 5):
# one client (from 127.0.0.2) keeps a thousand connections open, each having sent half a
# request, reopening every one the server closes, while another client (127.0.0.1) scrapes
# /metrics once a second: every scrape must succeed, and the server keeps at most the per-IP
# limit (32) of the hostile client's connections. The same over TLS with connections that
# never start their handshake. A client that keeps one connection and sends many requests on
# it (as the remote client does) is never refused. hold_check.py is the hostile client.
# Exit 0 pass, 77 skip, 1 fail.
here=$(cd "$(dirname "$0")/../.." && pwd)
data="$here/tests/data/exporter"
. "$data/lib.sh"

exp_preflight
trap exp_cleanup EXIT
trap 'exit 1' INT TERM HUP
command -v python3 >/dev/null || exp_skip "python3 is not installed"
command -v openssl >/dev/null || exp_fail "openssl is needed (make deps)"
command -v mkpasswd >/dev/null || exp_fail "mkpasswd is needed (package whois, make deps)"
# 1000 sockets in one process, and the exporter's own
[ "$(ulimit -n)" -ge 1100 ] || ulimit -n 4096 2>/dev/null || exp_skip "cannot raise the open file limit to 4096"

exp_start_provider
exp_start_exporter
port=$(echo "$EXP_URL" | sed 's|.*:\([0-9]*\)/metrics$|\1|')
# hold SCHEME PORT: the hostile client for 8 seconds, scrapes each second; its summary line
hold() {
	python3 "$here/tests/tools/hold_check.py" 127.0.0.1 "$2" 127.0.0.2 1000 8 \
		curl -sS -o /dev/null --max-time 5 --cacert "$EXP_TMP/ca.crt" \
		-w '%{http_code} %{time_total}' "$1://127.0.0.1:$2/metrics" >"$EXP_TMP/hold.out" 2>&1
	rc=$?
	cat "$EXP_TMP/hold.out"
	[ "$rc" = 0 ] || exp_fail "$1: a scrape failed while a client held 1000 connections"
	held=$(sed -n 's/^held \([0-9]*\),.*/\1/p' "$EXP_TMP/hold.out")
	[ -n "$held" ] && [ "$held" -le 32 ] && [ "$held" -ge 16 ] ||
		exp_fail "$1: the server held $held of the client's connections, expected up to 32"
}
hold http "$port"
exp_alive "$EXP_PID" || exp_fail "the exporter died"
grep -q 'log lines about clients suppressed' "$EXP_TMP/exporter.err" ||
	exp_fail "the refusals were not rate-limited in the log: $(wc -l <"$EXP_TMP/exporter.err") lines"
echo "ok    HTTP: scrapes served while one client holds 1000 half-open connections"

# one connection, many requests (curl reuses its connection for the URLs it is given)
urls=""
for i in $(seq 1 40); do urls="$urls $EXP_URL"; done
n=$(curl -sS -o /dev/null -w '%{http_code} %{num_connects}\n' $urls | grep -c '^200')
[ "$n" = 40 ] || exp_fail "40 requests on one connection: $n answered 200"

# a client of the limit's size is served in full: 32 connections at once from one address
pids=""
for i in $(seq 1 32); do
	curl -sS -o /dev/null -w '%{http_code}\n' --max-time 10 "$EXP_URL" >>"$EXP_TMP/par.out" &
	pids="$pids $!"
done
for p in $pids; do wait "$p"; done
n=$(grep -c '^200$' "$EXP_TMP/par.out")
[ "$n" = 32 ] || exp_fail "32 parallel connections from one address: $n answered 200"
echo "ok    one client's keep-alive connection and 32 parallel ones are served"

# ---- the same over TLS: connections that never send a ClientHello ----------------------
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-keyout "$EXP_TMP/ca.key" -out "$EXP_TMP/ca.crt" -subj "/CN=127.0.0.1" \
	-addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1 || exp_fail "openssl failed"
printf 'tls_server_config:\n  cert_file: ca.crt\n  key_file: ca.key\n' >"$EXP_TMP/web.yml"
exp_stop "$EXP_PID"
: >"$EXP_TMP/exporter.err"
"$TOOLS/perflib-exporter" --listen 127.0.0.1:0 --web.config.file "$EXP_TMP/web.yml" \
	2>"$EXP_TMP/exporter.err" &
EXP_PID=$!
exp_wait 100 grep -q 'listening on https://' "$EXP_TMP/exporter.err" ||
	exp_fail "the TLS exporter did not start: $(cat "$EXP_TMP/exporter.err")"
port=$(sed -n 's|.*listening on https://[^ ]*:\([0-9]*\)/metrics$|\1|p' "$EXP_TMP/exporter.err")
HOLD_SILENT=1 hold https "$port"
exp_alive "$EXP_PID" || exp_fail "the TLS exporter died"
echo "ok    TLS: scrapes served while one client holds 1000 connections without a handshake"
# ---- wrong passwords as fast as possible: bcrypt is bounded, others are served ----------
hash=$(mkpasswd -m bcrypt -R 11 'right') || exp_fail "mkpasswd -m bcrypt failed"
printf 'basic_auth_users:\n  alice: %s\n' "$hash" >"$EXP_TMP/users.yml"
exp_stop "$EXP_PID"
: >"$EXP_TMP/exporter.err"
exp_start_exporter --web.config.file "$EXP_TMP/users.yml"
curl -sS -o /dev/null -u alice:right "$EXP_URL" || exp_fail "the right password was refused"
urls=""
for i in $(seq 1 15); do urls="$urls $EXP_URL"; done
pids=""
for i in $(seq 1 8); do
	curl -sS -o /dev/null --interface 127.0.0.2 -u alice:wrong -w '%{http_code}\n' \
		--max-time 60 $urls >"$EXP_TMP/flood.$i" 2>&1 &
	pids="$pids $!"
done
for i in $(seq 1 5); do
	sleep 0.5
	got=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 -u alice:right "$EXP_URL")
	[ "$got" = 200 ] || exp_fail "a scrape with the right password during a flood: $got"
done
for p in $pids; do wait "$p"; done
n429=$(cat "$EXP_TMP"/flood.* | grep -c '^429$')
n401=$(cat "$EXP_TMP"/flood.* | grep -c '^401$')
echo "wrong-password flood: $n401 answered 401 after a bcrypt, $n429 answered 429 at once"
[ "$n429" -gt 0 ] && [ "$n401" -gt 0 ] && [ $((n429 + n401)) = 120 ] ||
	exp_fail "a flood of wrong passwords: $n401 x 401, $n429 x 429 of 120"
echo "ok    wrong passwords as fast as possible: bcrypt bounded (429), others served"
echo "ok: the exporter holds against one client's thousand half-open connections"
