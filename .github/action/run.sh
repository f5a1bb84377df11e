#!/usr/bin/env bash
# The logic of the mcpflight GitHub Action (action.yml): run mcpflight check
# on the inputs, make sure both reports were written, and exit with the
# check's exit code. It reads its inputs from the environment, so that it
# runs the same on a laptop (internal/ciaction runs it in a test):
#
#   MCPFLIGHT      the mcpflight binary (default: mcpflight on PATH)
#   INPUT_COMMAND  a stdio server's command line   } exactly one
#   INPUT_URL      a Streamable HTTP endpoint      }
#   INPUT_SERVE    the command that serves INPUT_URL, started and stopped
#                  by check itself (--serve); needs INPUT_URL
#   INPUT_PROFILE, INPUT_REVISION, INPUT_BASELINE, INPUT_STRICT (true|false)
#   INPUT_ARGS     more flags for check, split on spaces
#   INPUT_HTML, INPUT_JUNIT   the report paths (defaults as in action.yml)
#
# Outputs (to $GITHUB_OUTPUT when set): exit-code, and reports=true once
# both reports exist and are not empty.
set -uo pipefail

mcpflight=${MCPFLIGHT:-mcpflight}
html=${INPUT_HTML:-mcpflight-report.html}
junit=${INPUT_JUNIT:-mcpflight-junit.xml}
out=${GITHUB_OUTPUT:-/dev/null}

fail() {
	echo "mcpflight action: $*" >&2
	echo "exit-code=2" >>"$out"
	exit 2
}

command=${INPUT_COMMAND:-}
url=${INPUT_URL:-}
if [[ -n $command && -n $url ]]; then
	fail "give one of the inputs command and url, not both"
elif [[ -z $command && -z $url ]]; then
	fail "give the input command (a stdio server) or url (a Streamable HTTP endpoint)"
fi

args=(check --html "$html" --junit "$junit")
if [[ -n $command ]]; then
	args+=(--stdio "$command")
else
	args+=(--url "$url")
fi
if [[ -n ${INPUT_SERVE:-} ]]; then
	[[ -n $url ]] || fail "the input serve starts the server of url: give url too"
	args+=(--serve "$INPUT_SERVE")
fi
[[ -n ${INPUT_PROFILE:-} ]] && args+=(--profile "$INPUT_PROFILE")
[[ -n ${INPUT_REVISION:-} ]] && args+=(--protocol "$INPUT_REVISION")
[[ -n ${INPUT_BASELINE:-} ]] && args+=(--baseline "$INPUT_BASELINE")
case ${INPUT_STRICT:-false} in
true) args+=(--strict) ;;
false | "") ;;
*) fail "strict must be true or false, not '${INPUT_STRICT}'" ;;
esac
if [[ -n ${INPUT_ARGS:-} ]]; then
	read -r -a extra <<<"$INPUT_ARGS"
	args+=("${extra[@]}")
fi

rm -f -- "$html" "$junit"
mkdir -p -- "$(dirname -- "$html")" "$(dirname -- "$junit")"
"$mcpflight" "${args[@]}"
code=$?
echo "exit-code=$code" >>"$out"

missing=()
for report in "$html" "$junit"; do
	[[ -s $report ]] || missing+=("$report")
done
if ((${#missing[@]} > 0)); then
	echo "mcpflight action: mcpflight check exited $code without writing ${missing[*]}" >&2
	exit $((code == 0 ? 2 : code))
fi
echo "reports=true" >>"$out"
echo "mcpflight action: reports in $html and $junit (exit code $code)"
exit "$code"
