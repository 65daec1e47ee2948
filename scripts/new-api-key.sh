#!/usr/bin/env bash
# Mints a kg-agent API key and prints it with its auth_api_keys entry.
#
#   scripts/new-api-key.sh SUBJECT ROLES [EXPIRES]
#
# SUBJECT  who holds the key (recorded as the actor of what is done with it)
# ROLES    comma-separated: viewer, operator, approver, admin
# EXPIRES  optional: 2027-01-01 (midnight UTC) or RFC 3339 (2027-01-01T00:00:00Z)
#
# The key is `kga_` + 32 random bytes in base64url (43 characters). Only its SHA-256 goes
# into the service's configuration; the key itself is printed once, here. Coreutils only.
set -euo pipefail

usage() {
  echo "new-api-key: $1" >&2
  echo "usage: scripts/new-api-key.sh SUBJECT ROLES [EXPIRES]   e.g. scripts/new-api-key.sh alice operator,approver 2027-01-01" >&2
  exit 2
}

[ $# -ge 2 ] && [ $# -le 3 ] || usage "expected 2 or 3 arguments, got $#"
subject=$1
roles_in=$2
expires=${3:-}

# The same rules as the service's parser (crates/kg-identity/src/apikey.rs).
[ -n "$subject" ] || usage "SUBJECT is empty"
[ "${#subject}" -le 128 ] || usage "SUBJECT is longer than 128 characters"
case "$subject" in
  *'|'* | *';'* | *[[:cntrl:]]*) usage "SUBJECT must not contain '|', ';', line breaks or control characters" ;;
esac
case "$subject" in
  [[:space:]]* | *[[:space:]]) usage "SUBJECT must not start or end with a space" ;;
esac

roles=""
IFS=',' read -r -a role_list <<<"$roles_in"
for role in "${role_list[@]}"; do
  role=$(printf %s "$role" | tr -d '[:space:]' | tr '[:upper:]' '[:lower:]')
  [ -n "$role" ] || continue
  case "$role" in
    viewer | operator | approver | admin) ;;
    *) usage "unknown role '$role' (roles: viewer, operator, approver, admin)" ;;
  esac
  case ",$roles," in *",$role,"*) continue ;; esac
  roles=${roles:+$roles,}$role
done
[ -n "$roles" ] || usage "ROLES is empty (give at least one of viewer, operator, approver, admin)"

if [ -n "$expires" ]; then
  if ! [[ "$expires" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ||
          "$expires" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$ ]] ||
     ! date -u -d "$expires" +%s >/dev/null 2>&1; then
    usage "EXPIRES '$expires' is neither a date (2027-01-01) nor RFC 3339 (2027-01-01T00:00:00Z)"
  fi
fi

key="kga_$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
[ "${#key}" -eq 47 ] || { echo "new-api-key: could not read 32 random bytes" >&2; exit 1; }
hash=$(printf %s "$key" | sha256sum | cut -d' ' -f1)
entry="$subject|$roles|$hash${expires:+|$expires}"

echo "key:   $key"
echo "entry: $entry"
echo "Append the entry to the secret variable auth_api_keys (entries separated by ';'), e.g."
echo "  SPIN_VARIABLE_AUTH_API_KEYS='<existing>;$entry'"
echo "The key itself is shown only now; the service stores only its SHA-256."
