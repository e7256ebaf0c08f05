#!/usr/bin/env bash
# A throwaway PostgreSQL for the storage tests (Debian's `postgresql` package; `cargo xtask
# setup` installs it).
#
#   pg.sh bin                     print the directory of initdb and pg_ctl (exit 1: none)
#   pg.sh start DIR PORT [PID]    initdb DIR, start PostgreSQL on 127.0.0.1:PORT, wait until it
#                                 answers; with PID, stop it and remove DIR once PID is gone
#                                 (the test process: nothing outlives the tests)
#   pg.sh stop DIR                stop it at once (as a crash would: `-m immediate`)
#   pg.sh restart DIR PORT        stop it at once and start it again on the same files
#
# PostgreSQL refuses to run as root: as root the server runs as the package's `postgres` user.
set -euo pipefail

bin() {
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

# Runs a command as the server's user.
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start_server() {
    local dir="$1" port="$2" b
    b="$(bin)"
    as_pg "$b/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 30 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=on" start > /dev/null
}

start() {
    local dir="$1" port="$2" watch="${3:-}" b
    b="$(bin)" || { echo "pg.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then
        chown postgres "$dir"
    fi
    as_pg "$b/initdb" -D "$dir/data" -A trust -U postgres > "$dir/initdb.log" 2>&1
    start_server "$dir" "$port"
    if [ -n "$watch" ]; then
        # The watchdog: once the test process is gone, so is the server and its files.
        nohup bash -c "
            while kill -0 $watch 2>/dev/null; do sleep 1; done
            $(declare -f bin as_pg); as_pg \"\$(bin)/pg_ctl\" -D '$dir/data' -m immediate stop
            rm -rf '$dir'
        " > /dev/null 2>&1 &
    fi
}

stop() {
    local dir="$1"
    as_pg "$(bin)/pg_ctl" -D "$dir/data" -m immediate stop > /dev/null 2>&1 || true
}

case "${1:-}" in
    bin) bin ;;
    start) start "$2" "$3" "${4:-}" ;;
    stop) stop "$2" ;;
    restart) stop "$2"; start_server "$2" "$3" ;;
    *) echo "usage: pg.sh bin | start DIR PORT [PID] | stop DIR | restart DIR PORT" >&2; exit 2 ;;
esac
