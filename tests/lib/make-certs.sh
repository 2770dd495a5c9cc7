#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make-certs.sh DIR: every certificate the TLS tests need, made with
# openssl in DIR (created). All keys are EC P-256 (quick to make).
# make-certs.sh DIR dated NAME START END: NAME.pem/.key, a server
# certificate like server.pem by DIR's CA, valid from START to END
# (YYYYMMDDHHMMSSZ), for tests of expiry.
#
#   ca.pem, ca.key            the CA xdsd trusts for clients and clients
#                             trust for xdsd
#   server.pem/.key           for "localhost" (DNS) and 127.0.0.1, by ca
#   server2.pem/.key          the same names, another key: a rotation
#   server-expired.pem/.key   by ca, expired
#   server-soon.pem/.key      by ca, expires in a week
#   frontend.pem/.key         URI SAN spiffe://example.org/ns/prod/sa/frontend
#   backend.pem/.key          URI SAN spiffe://example.org/ns/prod/sa/backend
#   dnsonly.pem/.key          DNS SAN envoy-1.example.org only
#   cnonly.pem/.key           no SAN, subject CN=envoy-cn
#   noid.pem/.key             no SAN, no CN: valid, but proves no identity
#   expired.pem/.key          frontend's identity, expired
#   rogue.pem/.key            frontend's identity, signed by another CA
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }

# sign NAME SUBJECT EXT [CA [DAYS]]: a certificate for NAME.key, valid
# DAYS (a year)
sign() {
  key "$1"
  openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "${4:-ca}.pem" -CAkey "${4:-ca}.key" \
    -CAcreateserial -days "${5:-365}" -extfile "$1.ext" -out "$1.pem" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

# dated NAME SUBJECT EXT START END: the same, valid from START to END
# (openssl ca is the one command of OpenSSL 3.0 that takes explicit
# dates)
dated() {
  key "$1"
  openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$3" > "$1.ext"
  mkdir -p ca-db
  : > ca-db/index.txt
  [ -f ca-db/serial ] || echo 1000 > ca-db/serial
  cat > ca-db/ca.conf <<CONF
[ca]
default_ca = test
[test]
dir = ca-db
database = ca-db/index.txt
serial = ca-db/serial
new_certs_dir = ca-db
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = any
copy_extensions = none
[any]
commonName = supplied
CONF
  openssl ca -batch -config ca-db/ca.conf -in "$1.csr" -out "$1.pem" \
    -startdate "$4" -enddate "$5" -extfile "$1.ext" -notext 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

# expired NAME SUBJECT EXT: valid for a day in 2020
expired() { dated "$1" "$2" "$3" 20200101000000Z 20200102000000Z; }

server="subjectAltName=DNS:localhost,IP:127.0.0.1"
if [ "${2:-}" = dated ]; then
  dated "$3" "/CN=xdsd server $3" "$server" "$4" "$5"
  exit 0
fi

key ca
openssl req -x509 -new -key ca.key -subj "/CN=xdsd test CA" -days 365 \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
  -out ca.pem 2>/dev/null
key other-ca
openssl req -x509 -new -key other-ca.key -subj "/CN=another CA" -days 365 \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
  -out other-ca.pem 2>/dev/null

sign server "/CN=xdsd server one" "$server"
sign server2 "/CN=xdsd server two" "$server"
expired server-expired "/CN=xdsd server expired" "$server"
sign server-soon "/CN=xdsd server soon" "$server" ca 7
sign frontend "/CN=frontend" "subjectAltName=URI:spiffe://example.org/ns/prod/sa/frontend"
sign backend "/CN=backend" "subjectAltName=URI:spiffe://example.org/ns/prod/sa/backend"
sign dnsonly "/CN=dns-only" "subjectAltName=DNS:envoy-1.example.org"
sign cnonly "/CN=envoy-cn" "basicConstraints=CA:FALSE"
sign noid "/O=xdsd test/OU=no identity" "basicConstraints=CA:FALSE"
expired expired "/CN=frontend" "subjectAltName=URI:spiffe://example.org/ns/prod/sa/frontend"
sign rogue "/CN=frontend" "subjectAltName=URI:spiffe://example.org/ns/prod/sa/frontend" other-ca
