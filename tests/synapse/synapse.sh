#!/usr/bin/env bash
# A throwaway Synapse for the Matrix integration test (ZONEGRAPH_SLOW_TESTS=1).
#
#   synapse.sh setup                 create the venv (idempotent; cached in ~/.cache/zonegraph)
#   synapse.sh start DIR PORT [default-limits|default-message-limit]
#                                    set up, write DIR/homeserver.yaml, start Synapse on
#                                    127.0.0.1:PORT in the background, wait until it answers;
#                                    with default-limits, Synapse's own rate limits (rc_*, e.g.
#                                    rc_message 0.2/s, burst 10) instead of raised ones;
#                                    with default-message-limit, only rc_message at default
#   synapse.sh register DIR PORT USER PASSWORD   register a user with the shared secret
#   synapse.sh stop DIR              stop the Synapse started in DIR
#
# ZONEGRAPH_SYNAPSE_VENV overrides the venv location.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${ZONEGRAPH_SYNAPSE_VENV:-$HOME/.cache/zonegraph/synapse-venv}"

setup() {
    if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import synapse" 2>/dev/null; then
        return 0
    fi
    echo "synapse.sh: creating $venv (pip install matrix-synapse; takes a few minutes once)" >&2
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet matrix-synapse
}

start() {
    local dir="$1" port="$2" limits="${3:-raised}"
    setup
    mkdir -p "$dir/media_store"
    local secret
    secret="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
    sed -e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@SECRET@|$secret|g" \
        "$here/homeserver.yaml.in" > "$dir/homeserver.yaml"
    case "$limits" in
        default-limits)
            # Drop every top-level rc_* block: Synapse's defaults apply.
            awk '/^rc_/ {skip = 1; next} /^[^ ]/ {skip = 0} !skip' "$dir/homeserver.yaml" \
                > "$dir/homeserver.yaml.new"
            mv "$dir/homeserver.yaml.new" "$dir/homeserver.yaml" ;;
        default-message-limit)
            # Only rc_message at Synapse's default (0.2/s, burst 10); logins, joins and
            # invites stay raised (their defaults admit 5 logins from one address, then one
            # every 5 minutes).
            grep -v '^rc_message:' "$dir/homeserver.yaml" > "$dir/homeserver.yaml.new"
            mv "$dir/homeserver.yaml.new" "$dir/homeserver.yaml" ;;
    esac
    echo "$secret" > "$dir/shared_secret"
    "$venv/bin/python" -m synapse.app.homeserver -c "$dir/homeserver.yaml" --generate-keys \
        > "$dir/generate.log" 2>&1
    nohup "$venv/bin/python" -m synapse.app.homeserver -c "$dir/homeserver.yaml" \
        > "$dir/synapse.log" 2>&1 &
    echo $! > "$dir/synapse.pid"
    "$venv/bin/python" - "$port" "$dir/synapse.log" <<'PY'
import sys, time, urllib.request
port, log = sys.argv[1], sys.argv[2]
deadline = time.time() + 120
while time.time() < deadline:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/_matrix/client/versions", timeout=2)
        sys.exit(0)
    except Exception:
        time.sleep(0.25)
sys.stderr.write(open(log).read()[-4000:])
sys.exit("synapse.sh: Synapse did not answer within 120 s")
PY
}

register() {
    local dir="$1" port="$2" user="$3" password="$4"
    "$venv/bin/register_new_matrix_user" --exists-ok -u "$user" -p "$password" --no-admin \
        -k "$(cat "$dir/shared_secret")" "http://127.0.0.1:$port" >/dev/null 2>"$dir/register.err" \
    || "$venv/bin/register_new_matrix_user" -u "$user" -p "$password" --no-admin \
        -k "$(cat "$dir/shared_secret")" "http://127.0.0.1:$port" >/dev/null
}

stop() {
    local dir="$1"
    if [ -f "$dir/synapse.pid" ]; then
        kill "$(cat "$dir/synapse.pid")" 2>/dev/null || true
        rm -f "$dir/synapse.pid"
    fi
}

cmd="${1:-}"; shift || true
case "$cmd" in
    setup) setup ;;
    start) start "$@" ;;
    register) register "$@" ;;
    stop) stop "$@" ;;
    *) echo "usage: synapse.sh setup | start DIR PORT [default-limits|default-message-limit] | register DIR PORT USER PASSWORD | stop DIR" >&2; exit 2 ;;
esac
