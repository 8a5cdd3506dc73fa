#!/bin/sh
# collector_garbage.sh — malformed messages (length bombs, maps, wrong
# versions, truncations, random bytes, over-long strings) are refused and
# counted; the collector keeps running and keeps accepting good messages.
. tests/lib.sh
. tests/helpers/collector_e2e.sh

check "collector starts" start_collector
"$B/tests/collector_send" garbage >"$T/sent.txt"
bad=$(sed -n 's/.*bad=\([0-9]*\).*/\1/p' "$T/sent.txt")
check "collector survives the garbage" kill -0 "$CPID"
"$B/tests/collector_send" valid --calls 50 --batch 10 >/dev/null
check "collector still running" kill -0 "$CPID"
# over the wire limit: refused and counted by the decoder, not dropped by nng unseen
"$B/tests/collector_send" oversize >/dev/null
check "collector survives an oversized message" kill -0 "$CPID"
stop_collector INT
check_eq "collector exits 0 on SIGINT" 0 "$CRC"
check_eq "every malformed message counted (the oversized one too)" "$((bad + 1))" "$(q "SELECT sum(count) FROM losses WHERE source='malformed_message'")"
check_eq "good calls before and after the garbage stored" 60 "$(q 'SELECT count(*) FROM cuda_calls')"
check_eq "nothing from a malformed message stored" 0 "$(q "SELECT count(*) FROM kernels")"
check_eq "file is consistent" ok "$(q 'PRAGMA integrity_check')"
# (one line however many kinds of loss a loaded machine adds to it)
"$B/ingero-analyze" explain --verbose --width 10000 "$DB" >"$T/explain.txt" 2>&1
check "explain says what was lost, with the count" \
	grep -q "^Lost while tracing (docs/schema.md, losses):.* malformed_message $((bad + 1))\(,\|\$\)" "$T/explain.txt"
check_eq "explain --json has it under trace.losses" "$((bad + 1))" \
	"$("$B/ingero-analyze" explain --json "$DB" | python3 -c 'import json,sys; print(json.load(sys.stdin)["trace"]["losses"]["malformed_message"])')"
finish
