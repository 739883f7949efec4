#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
#
# SPDX-License-Identifier: Apache-2.0
# Real OpenStack object storage for the tests: installs Debian's Keystone and Swift packages (once;
# about 80 s) and starts a throw-away Keystone v3 (sqlite) and a Swift all-in-one on loopback.
#   hack/openstack.sh install        install the packages if missing
#   hack/openstack.sh start DIR [MAX_DELETES]
#                                    start both with state in DIR; the bulk middleware advertises
#                                    MAX_DELETES per request (default 10000, Swift's default).
#                                    Region RegionOne has bulk delete; region NoBulk reaches the
#                                    same cluster through a second proxy without it; region
#                                    NoAccessRules through a third whose authtoken middleware has
#                                    no service_type, so it cannot check access rules of
#                                    application credentials (it refuses their tokens).
#                                    Prints "KEYSTONE_URL SWIFT_URL" on the last line.
#   hack/openstack.sh stop DIR       stop what start started
# Ports are chosen free at start. Users: admin/secret (project admin, role admin),
# demo/demopass and other/otherpass (projects demo and other, role member).
set -euo pipefail

say() { printf '[openstack %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
PKGS=(swift swift-proxy swift-object swift-container swift-account python3-keystonemiddleware keystone)

install() {
  # Test packages start clusters in parallel: one install at a time. The lock lives in a subshell,
  # so that the services started later do not inherit it.
  (
    flock 9
    if command -v swift-proxy-server >/dev/null && command -v keystone-manage >/dev/null && /usr/bin/python3 -c 'import keystonemiddleware' 2>/dev/null; then
      exit 0
    fi
    say "installing Debian's Swift and Keystone packages (once, about 1-2 min)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null
    say "installed"
  ) 9>"${TMPDIR:-/tmp}/gardener-extension-backup-openstack-install.lock"
}

# free_ports N prints N distinct free ports (all held until chosen: one after the other could repeat).
free_ports() { python3 -c 'import socket,sys
ss=[socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1",0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"; }

start() {
  local B=${1:?state dir} MAXDEL=${2:-10000}
  install
  mkdir -p "$B"/{keystone,swift,node/d1,log}
  : >"$B/pids"
  local KSP SWP SWP2 SWP3 AP CP OP
  read -r KSP SWP SWP2 SWP3 AP CP OP <<<"$(free_ports 7)"
  local KS=http://127.0.0.1:$KSP/v3
  cat >"$B/keystone/keystone.conf" <<CONF
[DEFAULT]
use_stderr = true
[database]
connection = sqlite:///$B/keystone/keystone.db
[token]
provider = fernet
[fernet_tokens]
key_repository = $B/keystone/fernet-keys
[fernet_receipts]
key_repository = $B/keystone/fernet-keys
[credential]
key_repository = $B/keystone/credential-keys
CONF
  local KM="keystone-manage --config-file $B/keystone/keystone.conf"
  say "setting up Keystone (sqlite)"
  $KM db_sync >"$B/log/ks-manage.log" 2>&1
  # Write-ahead logging: readers no longer block a writer's commit, which otherwise fails some
  # writes with "database is locked" (deleting an application credential whose access rules
  # another one shares always did).
  python3 -c "import sqlite3; sqlite3.connect('$B/keystone/keystone.db').execute('PRAGMA journal_mode=WAL')"
  $KM fernet_setup --keystone-user root --keystone-group root >>"$B/log/ks-manage.log" 2>&1
  $KM credential_setup --keystone-user root --keystone-group root >>"$B/log/ks-manage.log" 2>&1
  $KM bootstrap --bootstrap-password secret --bootstrap-region-id RegionOne \
    --bootstrap-admin-url "$KS/" --bootstrap-public-url "$KS/" --bootstrap-internal-url "$KS/" >>"$B/log/ks-manage.log" 2>&1
  OS_KEYSTONE_CONFIG_FILES=$B/keystone/keystone.conf setsid /usr/bin/python3 /usr/bin/keystone-wsgi-public --host 127.0.0.1 --port "$KSP" >"$B/log/keystone.log" 2>&1 &
  echo $! >>"$B/pids"
  for _ in $(seq 1 300); do curl -sf -o /dev/null "$KS" && break; sleep 0.1; done

  local TOKEN
  TOKEN=$(curl -si -X POST "$KS/auth/tokens" -H 'Content-Type: application/json' -d '{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"admin","domain":{"id":"default"},"password":"secret"}}},"scope":{"project":{"name":"admin","domain":{"id":"default"}}}}}' | awk -F': ' 'tolower($1)=="x-subject-token"{print $2}' | tr -d '\r')
  # Keystone on sqlite sometimes answers 500 "database is locked" on a write: retry.
  ks() {
    local out code
    for _ in 1 2 3 4 5 6; do
      out=$(curl -s -w '\n%{http_code}' -X "$1" "$KS$2" -H "X-Auth-Token: $TOKEN" -H 'Content-Type: application/json' ${3:+-d "$3"})
      code=${out##*$'\n'}
      case $code in 2*) echo "${out%$'\n'*}"; return 0 ;; esac
      sleep 0.3
    done
    echo "keystone $1 $2 failed: $code" >&2; return 1
  }
  json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
  local SVC PID USR RID
  SVC=$(ks POST /services '{"service":{"type":"object-store","name":"swift","enabled":true}}' | json '["service"]["id"]')
  for IF in public internal admin; do
    ks POST /endpoints "{\"endpoint\":{\"service_id\":\"$SVC\",\"interface\":\"$IF\",\"region_id\":\"RegionOne\",\"url\":\"http://127.0.0.1:$SWP/v1/AUTH_%(project_id)s\"}}" >/dev/null
  done
  ks POST /regions '{"region":{"id":"NoBulk"}}' >/dev/null
  for IF in public internal admin; do
    ks POST /endpoints "{\"endpoint\":{\"service_id\":\"$SVC\",\"interface\":\"$IF\",\"region_id\":\"NoBulk\",\"url\":\"http://127.0.0.1:$SWP2/v1/AUTH_%(project_id)s\"}}" >/dev/null
  done
  ks POST /regions '{"region":{"id":"NoAccessRules"}}' >/dev/null
  ks POST /endpoints "{\"endpoint\":{\"service_id\":\"$SVC\",\"interface\":\"public\",\"region_id\":\"NoAccessRules\",\"url\":\"http://127.0.0.1:$SWP3/v1/AUTH_%(project_id)s\"}}" >/dev/null
  RID=$(ks GET '/roles?name=member' | json '["roles"][0]["id"]')
  for pu in demo:demopass other:otherpass; do
    PID=$(ks POST /projects "{\"project\":{\"name\":\"${pu%%:*}\",\"domain_id\":\"default\"}}" | json '["project"]["id"]')
    USR=$(ks POST /users "{\"user\":{\"name\":\"${pu%%:*}\",\"domain_id\":\"default\",\"password\":\"${pu##*:}\"}}" | json '["user"]["id"]')
    ks PUT "/projects/$PID/users/$USR/roles/$RID" >/dev/null
  done

  say "setting up Swift (all-in-one, 1 replica)"
  (
    cd "$B/swift"
    for t in account:$AP container:$CP object:$OP; do
      local n=${t%%:*} p=${t##*:}
      swift-ring-builder "$n.builder" create 10 1 1 >/dev/null
      swift-ring-builder "$n.builder" add "r1z1-127.0.0.1:$p/d1" 1 >/dev/null
      swift-ring-builder "$n.builder" rebalance >/dev/null || true
      cat >"$n-server.conf" <<CONF
[DEFAULT]
devices = $B/node
mount_check = false
disable_fallocate = true
bind_ip = 127.0.0.1
bind_port = $p
workers = 0
swift_dir = $B/swift
[pipeline:main]
pipeline = $n-server
[app:$n-server]
use = egg:swift#$n
CONF
    done
    cat >proxy-server.conf <<CONF
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = $SWP
workers = 0
swift_dir = $B/swift
[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging listing_formats bulk tempurl authtoken keystoneauth copy slo dlo versioned_writes symlink proxy-logging proxy-server
[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:bulk]
use = egg:swift#bulk
max_deletes_per_request = $MAXDEL
[filter:tempurl]
use = egg:swift#tempurl
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
[filter:versioned_writes]
use = egg:swift#versioned_writes
allow_versioned_writes = true
allow_object_versioning = true
[filter:symlink]
use = egg:swift#symlink
[filter:keystoneauth]
use = egg:swift#keystoneauth
operator_roles = admin, member
[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory
www_authenticate_uri = http://127.0.0.1:$KSP
auth_url = http://127.0.0.1:$KSP
auth_type = password
project_domain_id = default
user_domain_id = default
project_name = admin
username = admin
password = secret
delay_auth_decision = True
# Access rules of application credentials are checked only when the service knows its type.
service_type = object-store
CONF
    # The same cluster through a proxy without the bulk middleware.
    sed -e "s/^bind_port = $SWP\$/bind_port = $SWP2/" -e 's/ bulk / /' proxy-server.conf >proxy-nobulk.conf
    # The same cluster through a proxy that cannot check access rules.
    sed -e "s/^bind_port = $SWP\$/bind_port = $SWP3/" -e '/^service_type = /d' proxy-server.conf >proxy-noaccessrules.conf
  )
  for n in account container object proxy; do
    setsid /usr/bin/swift-$n-server "$B/swift/$n-server.conf" -v >"$B/log/swift-$n.log" 2>&1 &
    echo $! >>"$B/pids"
  done
  for conf in nobulk noaccessrules; do
    setsid /usr/bin/swift-proxy-server "$B/swift/proxy-$conf.conf" -v >"$B/log/swift-proxy-$conf.log" 2>&1 &
    echo $! >>"$B/pids"
  done
  for port in $SWP $SWP2 $SWP3; do
    for _ in $(seq 1 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthcheck" && break; sleep 0.1; done
  done
  for port in $SWP $SWP2 $SWP3; do
    curl -sf -o /dev/null "http://127.0.0.1:$port/healthcheck" || { say "swift did not start; logs in $B/log"; tail -n 20 "$B"/log/swift-proxy*.log >&2; exit 1; }
  done
  say "ready"
  echo "$KS http://127.0.0.1:$SWP"
}

stop() {
  local B=${1:?state dir}
  [[ -f $B/pids ]] || return 0
  while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$B/pids"
}

case ${1:-} in
  install) install ;;
  start) start "${2:-}" "${3:-}" ;;
  stop) stop "${2:-}" ;;
  *) echo "usage: $0 install | start DIR | stop DIR" >&2; exit 2 ;;
esac
