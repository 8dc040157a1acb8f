# SPDX-License-Identifier: MIT
# install_tmp.sh - sourced by the tool tests that install the build ($top: the source tree,
# $OUTPUT: the build). Make gets this build's OUTPUT and sanitizer setting, nothing else of
# the make running the test (its OUTPUT is relative, and CFLAGS must not change).
tmp_mkvars=
for _v in ${MAKEFLAGS:-}; do
	case $_v in SANITIZE=* | SAN=*) tmp_mkvars="$tmp_mkvars $_v" ;; esac
done
unset MAKEFLAGS MFLAGS MAKELEVEL

# tmp_make TARGET DEST - make TARGET (install, uninstall) with DESTDIR=DEST PREFIX=/usr;
# its output goes to DEST.TARGET.log
tmp_make() {
	# shellcheck disable=SC2086
	make -s -C "$top" "$1" DESTDIR="$2" PREFIX=/usr OUTPUT="$OUTPUT/" $tmp_mkvars \
		>"$2.$1.log" 2>&1
}
