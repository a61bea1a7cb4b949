# shellcheck shell=sh
# TAP (Test Anything Protocol, version 13) for every suite: sourced by the
# guest runner (busybox sh; copied into the initramfs as /tap.sh), by
# scripts/check-style-docs.sh, tests/packaging/ and tests/run-all.sh. POSIX sh
# only. Writes to fd $TAP_FD (default 1: stdout).
#
#   tap_header                  "TAP version 13"
#   tap_plan N                  "1..N" (first or last, as TAP allows)
#   tap_ok NAME [# DIRECTIVE]   the next result passed
#   tap_not_ok NAME             ... failed
#   tap_skip NAME REASON        ... was skipped ("ok N NAME # SKIP REASON")
#   tap_result RC NAME          tap_ok if RC is 0, else tap_not_ok NAME (exit RC)
#   tap_diag [TEXT...]          TEXT, or stdin, as "# " comment lines
#   tap_tally FILE...           "PASSED FAILED SKIPPED MISSING" from TAP text
#
# tap_n, tap_failed and tap_skipped count what this shell reported.

tap_n=0
tap_failed=0
tap_skipped=0

_tap_out() { printf '%s\n' "$*" >&"${TAP_FD:-1}"; }
tap_header() { _tap_out "TAP version 13"; }
tap_plan() { _tap_out "1..$1"; }
tap_ok() { tap_n=$((tap_n + 1)); _tap_out "ok $tap_n $*"; }
tap_not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	_tap_out "not ok $tap_n $*"
}
tap_skip() {
	tap_n=$((tap_n + 1))
	tap_skipped=$((tap_skipped + 1))
	_tap_out "ok $tap_n $1 # SKIP $2"
}
tap_result() {
	_rc=$1
	shift
	if [ "$_rc" -eq 0 ]; then tap_ok "$*"; else tap_not_ok "$* (exit $_rc)"; fi
}
tap_diag() {
	if [ $# -gt 0 ]; then
		printf '%s\n' "$*" | sed 's/^/# /' >&"${TAP_FD:-1}"
	else
		sed 's/^/# /' >&"${TAP_FD:-1}"
	fi
}

# tap_tally FILE...: counts the results of one or more TAP streams mixed
# with other output (lines that are not TAP are ignored, as TAP 13 says).
# A stream starts at "TAP version" or at a plan that follows a finished
# stream; its plan may come first or last. A result that a plan announced
# but the stream never gave counts as failed (MISSING says how many), as do
# results beyond the plan and "Bail out!". "not ok ... # TODO" is not a
# failure. Prints "PASSED FAILED SKIPPED MISSING".
tap_tally() {
	awk '
	function close_stream() {
		if (planned >= 0 && results < planned)
			missing += planned - results
		if (planned >= 0 && results > planned)
			extra += results - planned
		planned = -1
		results = 0
	}
	BEGIN { planned = -1 }
	FNR == 1 { close_stream() }	# each file is a stream of its own
	{ sub(/\r$/, "") }
	/^TAP version / { close_stream(); next }
	/^1\.\.[0-9]+/ {
		n = substr($0, 4) + 0
		if (planned < 0 && results > 0) {
			planned = n		# a plan at the end closes its stream
			close_stream()
		} else {
			if (planned >= 0)
				close_stream()
			planned = n		# a plan at the start
		}
		next
	}
	/^Bail out!/ { bailed++; next }
	/^(not )?ok([ \t]|$)/ {
		results++
		directive = ""
		if (match($0, /#[ \t]*[A-Za-z]+/)) {
			directive = toupper(substr($0, RSTART, RLENGTH))
			gsub(/[# \t]/, "", directive)
		}
		if ($1 == "not") {
			if (directive == "TODO")
				passed++
			else
				failed++
		} else if (substr(directive, 1, 4) == "SKIP") {
			skipped++
		} else {
			passed++
		}
	}
	END {
		close_stream()
		print passed + 0, failed + missing + extra + bailed, skipped + 0, missing + 0
	}' "$@"
}
